"""Browser test of the service's interactive documentation page (`GET /docs`, Swagger UI).

Run by tests/browser/run.sh (part of `make test`) against a live `petstore serve`:

    .venv/bin/python tests/browser/docs_test.py ORIGIN API_KEY [DOCS_PATH]

It drives Debian's headless Chromium through Debian's chromedriver, as a person would: the
page renders listPets, createPet and getPet (getPet deprecated), every asset comes from the
service itself (the page must work on closed networks), and an authorized "Try it out" of
listPets shows a live 200. On failure it saves a screenshot and the page's HTML to a temporary
directory, prints their paths and exits 1.
"""

import sys
import tempfile
import traceback

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_SECONDS = 30
OPERATIONS = ("listPets", "createPet", "getPet")


def start_browser(profile_dir):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # These flags are what works on this kind of machine: root needs --no-sandbox, and without
    # the background-networking ones Chromium keeps trying Google's hosts on a closed network.
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,2000",
        f"--user-data-dir={profile_dir}",
    ):
        options.add_argument(flag)
    # Keep the page's console messages: a JavaScript error is the usual cause of a blank page.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path makes Selenium skip Selenium Manager, which would try to download one.
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def wait_for(driver, condition, what):
    try:
        return WebDriverWait(driver, WAIT_SECONDS).until(condition)
    except TimeoutException:
        raise AssertionError(f"timed out after {WAIT_SECONDS} s waiting for {what}") from None


def operation_block(driver, operation_id):
    # Swagger UI gives each operation the id `operations-{tag}-{operationId}`.
    return wait_for(
        driver,
        ec.presence_of_element_located((By.CSS_SELECTOR, f'.opblock[id$="-{operation_id}"]')),
        f"operation {operation_id} to render",
    )


def check_page_served(driver):
    # Fail at once, with the status, when the page itself is missing (no 30 s wait for nothing).
    status = driver.execute_script("return performance.getEntriesByType('navigation')[0].responseStatus;")
    assert status == 200, f"{driver.current_url} answered HTTP {status}"


def check_operations_render(driver):
    for operation_id in OPERATIONS:
        operation_block(driver, operation_id)
    get_pet = operation_block(driver, "getPet")
    assert "opblock-deprecated" in get_pet.get_attribute("class"), "getPet is not shown as deprecated"


def check_assets_are_local(driver, origin):
    # Every script, stylesheet and request the page made must come from the service itself.
    urls = driver.execute_script(
        "return [location.href].concat(performance.getEntriesByType('resource').map(e => e.name));"
    )
    foreign = [u for u in urls if not (u.startswith(origin + "/") or u.startswith("data:"))]
    assert not foreign, f"the page loaded assets from outside the service: {foreign}"


def select_local_server(driver, origin):
    # The document names production and staging servers; "Try it out" must hit this server.
    selects = driver.find_elements(By.CSS_SELECTOR, ".servers select")
    if not selects:
        return
    select = Select(selects[0])
    values = [o.get_attribute("value") for o in select.options]
    wanted = [v for v in values if v.startswith(origin + "/") or v.startswith("/")]
    assert wanted, f"no server in the servers list points at this service ({origin}): {values}"
    select.select_by_value(wanted[0])


def authorize(driver, key):
    driver.find_element(By.CSS_SELECTOR, ".auth-wrapper button.authorize").click()
    modal = wait_for(
        driver, ec.visibility_of_element_located((By.CSS_SELECTOR, ".modal-ux")), "the Authorize dialog"
    )
    modal.find_element(By.CSS_SELECTOR, "input").send_keys(key)
    modal.find_element(By.CSS_SELECTOR, ".auth-btn-wrapper button.authorize").click()
    wait_for(
        driver,
        ec.element_to_be_clickable((By.CSS_SELECTOR, ".modal-ux .auth-btn-wrapper button.btn-done")),
        "the dialog to accept the key",
    ).click()
    wait_for(driver, ec.invisibility_of_element_located((By.CSS_SELECTOR, ".modal-ux")), "the dialog to close")


def try_out_list_pets(driver, origin):
    block = operation_block(driver, "listPets")
    block.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
    wait_for(
        driver,
        ec.element_to_be_clickable((By.CSS_SELECTOR, '.opblock[id$="-listPets"] button.try-out__btn')),
        "listPets' Try it out button",
    ).click()
    wait_for(
        driver,
        ec.element_to_be_clickable((By.CSS_SELECTOR, '.opblock[id$="-listPets"] button.execute')),
        "listPets' Execute button",
    ).click()
    status_cell = wait_for(
        driver,
        ec.visibility_of_element_located(
            (By.CSS_SELECTOR, '.opblock[id$="-listPets"] .live-responses-table tbody .response-col_status')
        ),
        "the live response of listPets",
    )
    status = status_cell.text.strip()
    body = block.find_elements(By.CSS_SELECTOR, ".live-responses-table tbody .response-col_description")
    detail = body[0].text[:500] if body else ""
    assert status == "200", f"listPets' live response is {status!r}, expected 200: {detail}"
    url = block.find_element(By.CSS_SELECTOR, ".request-url pre").text.strip()
    assert url.startswith(origin + "/v1/pets"), f"Try it out called {url}, not this service's /v1/pets"


def try_it_out(driver, origin, key):
    select_local_server(driver, origin)
    authorize(driver, key)
    try_out_list_pets(driver, origin)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    origin, key = sys.argv[1].rstrip("/"), sys.argv[2]
    docs_url = origin + (sys.argv[3] if len(sys.argv) == 4 else "/docs")
    checks = [
        ("the page is served", check_page_served),
        ("the three operations render, getPet deprecated", check_operations_render),
        ("every asset comes from the service", lambda d: check_assets_are_local(d, origin)),
        ("an authorized Try it out of listPets shows 200", lambda d: try_it_out(d, origin, key)),
    ]
    with tempfile.TemporaryDirectory(prefix="petstore-chromium-") as profile:
        driver = start_browser(profile)
        passed = 0
        try:
            driver.get(docs_url)
            for name, check in checks:
                check(driver)
                passed += 1
                print(f"ok: {name}")
        except Exception:  # any failure: keep the evidence, then fail
            traceback.print_exc()
            artifacts = tempfile.mkdtemp(prefix="petstore-docs-test-")
            shot = f"{artifacts}/docs.png"
            driver.save_screenshot(shot)
            with open(f"{artifacts}/docs.html", "w", encoding="utf-8") as f:
                f.write(driver.page_source)
            for entry in driver.get_log("browser"):
                print(f"browser console: {entry['level']} {entry['message']}", file=sys.stderr)
            print(f"FAILED at: {checks[passed][0]} ({docs_url})", file=sys.stderr)
            print(f"screenshot: {shot}\npage source: {artifacts}/docs.html", file=sys.stderr)
            print(f"browser: {passed} passed, 1 failed")
            sys.exit(1)
        finally:
            driver.quit()
    print(f"browser: {passed} passed, 0 failed")


if __name__ == "__main__":
    main()
