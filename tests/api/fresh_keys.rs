//! A key issued by `petstore keys issue` in another process works on its very first request, on
//! every instance: the server looks a correctly signed key it does not know up in the registry
//! at once instead of refusing it until its next refresh.

use crate::instances::two_instances;
use petstore_test_support::{send, Backend, TestApp};

/// How many keys each test issues and uses at once: enough that a refusal that depends on
/// timing (a refresh landing just before or after the issue) would show.
const ROUNDS: usize = 200;

#[actix_web::test]
async fn a_key_issued_by_another_process_works_on_its_first_request_on_sqlite() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    let mut refused = Vec::new();
    for round in 0..ROUNDS {
        let key = app.issue_key(&["--name", &format!("fresh {round}")]).await;
        let listed = send(app.client.get(app.url("/v1/pets")).bearer_auth(&key), None).await;
        if listed.status.as_u16() != 200 {
            refused.push((round, listed.status.as_u16(), listed.body));
        }
    }
    assert!(refused.is_empty(), "refused: {refused:?}");
}

#[actix_web::test]
async fn a_key_issued_by_another_process_works_at_once_on_two_postgres_instances() {
    let (app, other) = two_instances().await;
    let mut refused = Vec::new();
    for round in 0..ROUNDS {
        let key = app.issue_key(&["--name", &format!("fresh {round}")]).await;
        // The first request goes to either instance, the second to the other.
        let (first, second) = if round % 2 == 0 {
            (&app.address, &other.address)
        } else {
            (&other.address, &app.address)
        };
        for address in [first, second] {
            let request = app
                .client
                .get(format!("{address}/v1/pets"))
                .bearer_auth(&key);
            let listed = send(request, None).await;
            if listed.status.as_u16() != 200 {
                refused.push((round, address.clone(), listed.status.as_u16()));
            }
        }
    }
    assert!(refused.is_empty(), "refused: {refused:?}");
}
