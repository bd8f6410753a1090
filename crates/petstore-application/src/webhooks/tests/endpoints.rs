//! `WebhookService`: what each endpoint use case asks of the vault and the repository, at the
//! clock's instant, and what it answers.

use mockall::predicate::eq;
use petstore_domain::{EventTypes, PageLimit};

use super::*;
use crate::RepositoryError;

fn endpoint(id: i64) -> WebhookEndpoint {
    WebhookEndpoint {
        id: endpoint_id(id),
        url: url(&format!("hooks{id}.example")),
        event_types: EventTypes::EVERY,
        disabled: None,
        created_at_ms: NOW_MS - 1_000,
        updated_at_ms: NOW_MS - 1_000,
    }
}

fn delivery(id: i64) -> Delivery {
    Delivery {
        id: delivery_id(id),
        endpoint_id: endpoint_id(1),
        event_id: event_id(1),
        event_type: "pet.created".to_owned(),
        status: DeliveryStatus::Failed,
        failure: Some(petstore_domain::DeliveryFailure::Exhausted),
        created_at_ms: NOW_MS - 5_000,
        next_attempt_ms: None,
        attempts: Vec::new(),
    }
}

fn service(repository: MockWebhookRepository, vault: MockSecretVault) -> WebhookService {
    service_with_bodies(repository, vault, MockEventBody::new())
}

fn service_with_bodies(
    repository: MockWebhookRepository,
    vault: MockSecretVault,
    bodies: MockEventBody,
) -> WebhookService {
    WebhookService::new(
        Arc::new(repository),
        Arc::new(vault),
        Arc::new(bodies),
        clock(),
    )
}

/// A vault whose next secret is `whsec_new`, sealed as `sealed-new`.
fn generating_vault() -> MockSecretVault {
    let mut vault = MockSecretVault::new();
    vault
        .expect_generate()
        .times(1)
        .returning(|| (secret("new"), SealedSecret("sealed-new".to_owned())));
    vault
}

fn unavailable() -> RepositoryError {
    RepositoryError::Unavailable("pool timed out".into())
}

#[tokio::test]
async fn create_stores_the_new_secret_sealed_and_answers_it_once_in_plain() {
    let types = EventTypes::parse_list("pet.created,order.*").unwrap();
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_create()
        .withf(move |new, plan| {
            *new == NewEndpoint {
                url: url("hooks.example"),
                event_types: types,
                enabled: false,
                secret: secret("new"),
                sealed: SealedSecret("sealed-new".to_owned()),
                now_ms: NOW_MS,
            } && plan.is_none()
        })
        .return_once(|new, _| {
            Ok(Written::Done(
                CreatedEndpoint {
                    endpoint: endpoint(1),
                    secret: new.secret,
                },
                None,
            ))
        });
    let created = service(repository, generating_vault())
        .create_endpoint(
            EndpointRequest {
                url: url("hooks.example"),
                event_types: types,
                enabled: false,
            },
            None,
        )
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(created.secret.expose(), "whsec_new");
    assert_eq!(created.endpoint, endpoint(1));
}

#[tokio::test]
async fn a_store_with_every_endpoint_it_keeps_refuses_another() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_create()
        .return_once(|_, _| Err(WebhookError::TooManyEndpoints));
    let err = service(repository, generating_vault())
        .create_endpoint(
            EndpointRequest {
                url: url("hooks.example"),
                event_types: EventTypes::EVERY,
                enabled: true,
            },
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the store has 50 webhook endpoints already, the most it keeps; delete one first"
    );
}

#[tokio::test]
async fn rotation_keeps_the_previous_secret_signing_for_a_day() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_rotate_secret()
        .withf(|id, rotation, plan| {
            *id == endpoint_id(3)
                && *rotation
                    == SecretRotation {
                        secret: secret("new"),
                        sealed: SealedSecret("sealed-new".to_owned()),
                        previous_expires_ms: NOW_MS + 24 * 60 * 60 * 1_000,
                        now_ms: NOW_MS,
                    }
                && plan.is_none()
        })
        .return_once(|_, rotation, _| {
            Ok(Written::Done(
                RotatedSecret {
                    endpoint: endpoint(3),
                    secret: rotation.secret,
                    previous_expires_ms: rotation.previous_expires_ms,
                },
                None,
            ))
        });
    let rotated = service(repository, generating_vault())
        .rotate_secret(endpoint_id(3), None)
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(rotated.secret.expose(), "whsec_new");
    assert_eq!(rotated.previous_expires_ms, NOW_MS + 86_400_000);
}

#[tokio::test]
async fn a_ping_adds_a_webhook_ping_delivery_of_the_rendered_test_event() {
    let mut bodies = MockEventBody::new();
    bodies
        .expect_ping()
        .with(eq(NOW_MS), eq(endpoint_id(7)))
        .times(1)
        .returning(|_, _| (event_id(9), b"{\"type\":\"webhook.ping\"}".to_vec()));
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_add_delivery()
        .with(eq(NewDelivery {
            endpoint: endpoint_id(7),
            event_id: event_id(9),
            event_type: "webhook.ping".to_owned(),
            body: b"{\"type\":\"webhook.ping\"}".to_vec(),
            now_ms: NOW_MS,
        }))
        .return_once(|_| Ok(delivery(12)));
    let added = service_with_bodies(repository, MockSecretVault::new(), bodies)
        .ping(endpoint_id(7))
        .await
        .unwrap();
    assert_eq!(added, delivery(12));
}

#[tokio::test]
async fn a_ping_to_a_disabled_endpoint_is_refused_naming_it() {
    let mut bodies = MockEventBody::new();
    bodies
        .expect_ping()
        .returning(|_, _| (event_id(9), b"{}".to_vec()));
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_add_delivery()
        .return_once(|new| Err(WebhookError::EndpointDisabled(new.endpoint)));
    let err = service_with_bodies(repository, MockSecretVault::new(), bodies)
        .ping(endpoint_id(7))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "webhook endpoint 7 is disabled; enable it first"
    );
}

#[tokio::test]
async fn an_endpoint_page_reads_one_row_more_and_says_where_the_next_starts() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_list()
        .with(eq(Some(endpoint_id(4))), eq(3))
        .return_once(|_, _| Ok(vec![endpoint(5), endpoint(6), endpoint(9)]));
    repository
        .expect_list()
        .with(eq(Some(endpoint_id(6))), eq(3))
        .return_once(|_, _| Ok(vec![endpoint(9)]));
    let service = service(repository, MockSecretVault::new());
    let limit = PageLimit::parse(2).unwrap();

    let page = service
        .list_endpoints(Some(endpoint_id(4)), limit)
        .await
        .unwrap();
    assert_eq!(page.endpoints, [endpoint(5), endpoint(6)]);
    assert_eq!(page.next_after, Some(endpoint_id(6)));

    let last = service
        .list_endpoints(page.next_after, limit)
        .await
        .unwrap();
    assert_eq!(last.endpoints, [endpoint(9)]);
    assert_eq!(last.next_after, None);
}

#[tokio::test]
async fn a_delivery_page_reads_one_row_more_newest_first_and_says_where_the_next_starts() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_deliveries()
        .with(eq(DeliveryQuery {
            endpoint: endpoint_id(1),
            status: Some(DeliveryStatus::Failed),
            before: Some(delivery_id(10)),
            max: 3,
        }))
        .return_once(|_| Ok(vec![delivery(9), delivery(8), delivery(7)]));
    repository
        .expect_deliveries()
        .with(eq(DeliveryQuery {
            endpoint: endpoint_id(1),
            status: None,
            before: None,
            max: 21,
        }))
        .return_once(|_| Ok(vec![delivery(2)]));
    let service = service(repository, MockSecretVault::new());

    let page = service
        .list_deliveries(
            endpoint_id(1),
            Some(DeliveryStatus::Failed),
            Some(delivery_id(10)),
            PageLimit::parse(2).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(page.deliveries, [delivery(9), delivery(8)]);
    assert_eq!(page.next_before, Some(delivery_id(8)));

    let last = service
        .list_deliveries(endpoint_id(1), None, None, PageLimit::DEFAULT)
        .await
        .unwrap();
    assert_eq!(last.deliveries, [delivery(2)]);
    assert_eq!(last.next_before, None);
}

#[tokio::test]
async fn get_endpoint_answers_it_or_not_found_naming_the_id() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_find()
        .with(eq(endpoint_id(3)))
        .return_once(|_| Ok(Some(endpoint(3))));
    repository
        .expect_find()
        .with(eq(endpoint_id(4)))
        .return_once(|_| Ok(None));
    repository
        .expect_find()
        .with(eq(endpoint_id(5)))
        .return_once(|_| Err(unavailable()));
    let service = service(repository, MockSecretVault::new());

    assert_eq!(
        service.get_endpoint(endpoint_id(3)).await.unwrap(),
        endpoint(3)
    );
    let err = service.get_endpoint(endpoint_id(4)).await.unwrap_err();
    assert!(matches!(err, WebhookError::NotFound(missing) if missing == endpoint_id(4)));
    assert_eq!(err.to_string(), "no webhook endpoint has the id 4");
    let err = service.get_endpoint(endpoint_id(5)).await.unwrap_err();
    assert!(matches!(err, WebhookError::Repository(_)), "{err}");
}

#[tokio::test]
async fn get_delivery_answers_it_or_not_found_naming_both_ids() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_find_delivery()
        .with(eq(endpoint_id(1)), eq(delivery_id(12)))
        .return_once(|_, _| Ok(Some(delivery(12))));
    repository
        .expect_find_delivery()
        .with(eq(endpoint_id(2)), eq(delivery_id(12)))
        .return_once(|_, _| Ok(None));
    let service = service(repository, MockSecretVault::new());

    assert_eq!(
        service
            .get_delivery(endpoint_id(1), delivery_id(12))
            .await
            .unwrap(),
        delivery(12)
    );
    let err = service
        .get_delivery(endpoint_id(2), delivery_id(12))
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        WebhookError::DeliveryNotFound { endpoint, delivery }
            if endpoint == endpoint_id(2) && delivery == delivery_id(12)
    ));
    assert_eq!(
        err.to_string(),
        "webhook endpoint 2 has no delivery with the id 12"
    );
}

#[tokio::test]
async fn update_and_retry_happen_at_the_clocks_instant() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_update()
        .withf(|id, change, now_ms, plan| {
            *id == endpoint_id(3)
                && change.enabled == Some(false)
                && *now_ms == NOW_MS
                && plan.is_none()
        })
        .return_once(|_, _, _, _| Ok(Written::Done(endpoint(3), None)));
    repository
        .expect_retry_delivery()
        .with(eq(endpoint_id(3)), eq(delivery_id(12)), eq(NOW_MS))
        .return_once(|_, _, _| Ok(delivery(12)));
    let service = service(repository, MockSecretVault::new());

    let change = EndpointChange {
        enabled: Some(false),
        ..EndpointChange::default()
    };
    let updated = service
        .update_endpoint(endpoint_id(3), change, None)
        .await
        .unwrap();
    assert_eq!(updated.done(), Some(endpoint(3)));
    let retried = service
        .retry_delivery(endpoint_id(3), delivery_id(12))
        .await
        .unwrap();
    assert_eq!(retried, delivery(12));
}

#[tokio::test]
async fn a_delivery_being_attempted_is_not_retried_naming_it() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_retry_delivery()
        .return_once(|_, id, _| Err(WebhookError::InFlight(id)));
    let err = service(repository, MockSecretVault::new())
        .retry_delivery(endpoint_id(3), delivery_id(12))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "delivery 12 is being attempted right now; retry it after the attempt"
    );
}
