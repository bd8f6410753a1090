//! What a storefront shows of a pet besides the spec's fields: its price, a description, photos
//! and tags, each optional, so a pet made of the spec's fields alone has none of them.

use super::{PetDescription, PhotoUrls, Price, Tags};

/// A pet's optional details. An empty list of photos or tags is the same as none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PetDetails {
    pub price: Option<Price>,
    pub description: Option<PetDescription>,
    pub photo_urls: PhotoUrls,
    pub tags: Tags,
}

impl PetDetails {
    /// Whether the pet has none of them.
    pub fn is_empty(&self) -> bool {
        self.price.is_none()
            && self.description.is_none()
            && self.photo_urls.is_empty()
            && self.tags.is_empty()
    }
}
