"""Browser test of cross-origin access (CORS), run by tests/browser/run.sh (part of `make test`).

    .venv/bin/python tests/browser/cors_test.py API_ORIGIN API_KEY PAGE_PORT

The API must have been started with PETSTORE_CORS_ORIGINS=http://127.0.0.1:PAGE_PORT. This
script serves a page on that origin; headless Chromium opens it, and the page's script creates
two pets (a preflighted POST with `Authorization` and `Content-Type`), creates a third twice
with the same `Idempotency-Key` (reading `Idempotent-Replayed` on the replay), and lists one,
reading the `Link` header a script may only see when the API exposes it. The same page opened from
http://localhost:PAGE_PORT, an origin the API does not allow, must be refused by the browser.
"""

import http.server
import sys
import tempfile
import threading
import traceback

from docs_test import start_browser, wait_for

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cross-origin client</title></head>
<body data-done="no">
<script>
const params = new URLSearchParams(location.search);
const api = params.get("api");
const key = params.get("key");
async function run() {
  const headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"};
  for (const name of ["Alpha", "Beta"]) {
    const created = await fetch(api + "/v1/pets", {method: "POST", headers,
      body: JSON.stringify({name, categoryId: 1})});
    document.body.dataset.created = (document.body.dataset.created || "") + created.status + " ";
  }
  // A create with a retry key, sent twice: the second is a replay the script can see.
  const retried = {...headers, "Idempotency-Key": "browser-" + Date.now()};
  for (let attempt = 0; attempt < 2; attempt++) {
    const created = await fetch(api + "/v1/pets", {method: "POST", headers: retried,
      body: JSON.stringify({name: "Gamma", categoryId: 1})});
    document.body.dataset.replayed = (document.body.dataset.replayed || "") + created.status + ":"
      + (created.headers.get("Idempotent-Replayed") || "-") + " ";
  }
  const page = await fetch(api + "/v1/pets?limit=1", {headers: {"Authorization": "Bearer " + key}});
  document.body.dataset.status = String(page.status);
  document.body.dataset.link = page.headers.get("Link") || "";
  document.body.dataset.requestId = page.headers.get("X-Request-Id") || "";
}
run().catch(error => { document.body.dataset.error = String(error); })
     .finally(() => { document.body.dataset.done = "yes"; });
</script>
</body></html>
"""


class PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the name http.server calls)
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def page_result(driver, page_origin, api, key):
    driver.get(f"{page_origin}/index.html?api={api}&key={key}")
    wait_for(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-done") == "yes",
             "the page's script to finish")
    body = driver.find_element("tag name", "body")
    return {name: body.get_attribute(f"data-{name}") for name in
            ("created", "replayed", "status", "link", "request-id", "error")}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    api, key, port = sys.argv[1].rstrip("/"), sys.argv[2], int(sys.argv[3])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), PageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="petstore-chromium-") as profile:
        driver = start_browser(profile)
        try:
            allowed = page_result(driver, f"http://127.0.0.1:{port}", api, key)
            assert allowed["error"] is None, allowed
            assert allowed["created"].split() == ["201", "201"], allowed
            assert allowed["status"] == "200", allowed
            assert 'rel="next"' in allowed["link"], allowed
            assert allowed["request-id"], allowed
            print("ok: a page on an allowed origin creates pets and reads the Link header")
            assert allowed["replayed"].split() == ["201:-", "201:true"], allowed
            print("ok: it sends Idempotency-Key and reads Idempotent-Replayed on the replay")

            refused = page_result(driver, f"http://localhost:{port}", api, key)
            assert refused["error"] and "TypeError" in refused["error"], refused
            print("ok: a page on another origin is refused by the browser")
        except Exception:
            traceback.print_exc()
            for entry in driver.get_log("browser"):
                print(f"browser console: {entry['level']} {entry['message']}", file=sys.stderr)
            print("cors: failed")
            sys.exit(1)
        finally:
            driver.quit()
            server.shutdown()
    print("cors: 3 passed, 0 failed")


if __name__ == "__main__":
    main()
