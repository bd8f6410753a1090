//! The bodies webhooks post: each event exactly as `listEvents` answers it, and the
//! `webhook.ping` test event in the same shape. Handed to the delivery worker as the
//! application's `EventBody` port, so that a receiver and a feed reader parse one format.

use std::time::{Duration, UNIX_EPOCH};

use petstore_application::EventBody;
use petstore_domain::{EndpointId, Event, EventId, EVENT_PAYLOAD_VERSION, PING_EVENT_TYPE};
use serde::Serialize;

use super::dto::EventDto;
use super::Payloads;
use crate::wire::json_out::json_bytes;

/// Renders events with the resources' own representations.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonEventBodies {
    pub(crate) payloads: Payloads,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PingDto<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    event_type: &'static str,
    timestamp: String,
    payload_version: u32,
    data: PingData,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PingData {
    endpoint_id: i64,
}

impl EventBody for JsonEventBodies {
    fn event(&self, event: &Event) -> Vec<u8> {
        // A DTO of strings, numbers and raw JSON always serializes.
        json_bytes(&EventDto::of_event(event.clone(), &self.payloads)).unwrap_or_default()
    }

    fn ping(&self, at_ms: i64, endpoint: EndpointId) -> (EventId, Vec<u8>) {
        let mut random = [0; 16];
        // Without the system's random source the id is still unique enough for a test event:
        // its time and endpoint follow in the bytes.
        if getrandom::fill(&mut random).is_err() {
            random[..8].copy_from_slice(&at_ms.to_be_bytes());
            random[8..].copy_from_slice(&endpoint.get().to_be_bytes());
        }
        let id = EventId::from_random(random);
        let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(at_ms).unwrap_or(0));
        let body = serde_json::to_vec(&PingDto {
            id: id.as_str(),
            event_type: PING_EVENT_TYPE,
            timestamp: humantime::format_rfc3339_millis(at).to_string(),
            payload_version: EVENT_PAYLOAD_VERSION,
            data: PingData {
                endpoint_id: endpoint.get(),
            },
        })
        .unwrap_or_default();
        (id, body)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn bodies() -> JsonEventBodies {
        JsonEventBodies {
            payloads: crate::app::PAYLOADS,
        }
    }

    #[test]
    fn a_ping_is_an_event_of_its_own_type_for_its_endpoint() {
        let endpoint = EndpointId::parse(12).unwrap();
        let (id, body) = bodies().ping(1_764_236_061_512, endpoint);
        let ping: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(ping["id"], id.as_str());
        assert_eq!(ping["type"], "webhook.ping");
        assert_eq!(ping["timestamp"], "2025-11-27T09:34:21.512Z");
        assert_eq!(ping["payloadVersion"], 1);
        assert_eq!(ping["data"], serde_json::json!({"endpointId": 12}));
        let (again, _) = bodies().ping(1_764_236_061_512, endpoint);
        assert_ne!(again, id, "every ping has an id of its own");
    }
}
