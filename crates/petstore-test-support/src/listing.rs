//! Walking a pet listing along its `Link: <...>; rel="next"` headers.

use std::time::Instant;

use awc::http::StatusCode;
use serde_json::Value;

use crate::app::TestApp;
use crate::http::send;

impl TestApp {
    /// Every pet reached from `first` by following `Link: <...>; rel="next"` headers.
    pub async fn list_following_next_links(&self, first: &str) -> Vec<Value> {
        let mut pages = NextLinks::from(first);
        let mut pets = Vec::new();
        while let Some(page) = pages.next_page(self).await {
            pets.extend(page.pets);
        }
        pets
    }
}

/// Walks a listing page by page along its `Link: <...>; rel="next"` headers.
pub struct NextLinks {
    next: Option<String>,
    pages: usize,
}

/// One page of a listing, and when its request was sent.
pub struct Page {
    pub pets: Vec<Value>,
    pub sent: Instant,
}

impl NextLinks {
    pub fn from(first: &str) -> Self {
        Self {
            next: Some(first.to_owned()),
            pages: 0,
        }
    }

    /// The next page (asserting a 200), or `None` after the page without a `next` link.
    pub async fn next_page(&mut self, app: &TestApp) -> Option<Page> {
        let path = self.next.take()?;
        let sent = Instant::now();
        let response = send(app.get(&path), None).await;
        assert_eq!(response.status, StatusCode::OK, "{path}: {}", response.body);
        self.next = response.header("link").map(next_link_target);
        self.pages += 1;
        assert!(self.pages <= 1_000, "next links never end");
        let pets = response.json().as_array().expect("a bare array").clone();
        Some(Page { pets, sent })
    }
}

/// The target of a `Link: <TARGET>; rel="next"` header.
pub fn next_link_target(link: &str) -> String {
    assert!(link.ends_with(r#"rel="next""#), "not a next link: {link}");
    let start = link.find('<').expect("a link target") + 1;
    let end = link.find('>').expect("a link target");
    let target = &link[start..end];
    assert!(
        target.starts_with("/v1/pets?"),
        "next link leaves the listing: {target}"
    );
    target.to_owned()
}
