//! The pet store's domain: the values a pet is made of, the rules that keep them valid, the
//! status life cycle, the orders that move pets through it, the API keys that give access to
//! them, the events that record every change and the webhooks that deliver them, the idempotency keys that make retried writes safe, and the one rule every
//! human-entered name (a pet's, a key holder's) follows. Nothing here knows about HTTP,
//! SQL or async runtimes; adapters turn their own representations into these types with each
//! type's `parse`/`new` and get a typed error back.

mod api_key;
mod category;
mod decimal;
mod event;
mod human_name;
mod idempotency;
mod inventory;
mod order;
mod page_limit;
mod pet;
mod webhook;

pub use api_key::{
    ApiKey, KeyId, KeyIdError, KeyName, KeyNameError, KeyScope, KeyScopeError, KeyState,
    TokenDigest,
};
pub use category::{Category, CategoryName, CategoryNameError};
pub use event::{
    Event, EventAudience, EventId, EventIdError, EventSubject, EventSubjectError, EventType,
    EventTypeError, EventTypes, FeedEntry, FeedPosition, EVENT_PAYLOAD_VERSION,
};
pub use human_name::{HiddenKind, HumanNameError};
pub use idempotency::{IdempotencyKey, IdempotencyKeyError, IdempotencyRetention};
pub use inventory::Inventory;
pub use order::{
    Caller, NewOrder, OpenOrderLimit, OpenOrderLimitError, Order, OrderAction, OrderConflict,
    OrderFilter, OrderId, OrderListQuery, OrderQuantity, OrderQuantityError, OrderStatus,
    OrderStatusError, TooManyOpenOrders, VisibleOrders,
};
pub use page_limit::{PageLimit, PageLimitError};
pub use webhook::{
    AddressPolicy, AddressRefusal, Attempt, AttemptError, Delivery, DeliveryFailure, DeliveryId,
    DeliveryIdError, DeliveryStatus, DisabledReason, EndpointId, EndpointIdError, RetrySchedule,
    RetryScheduleError, SigningSecret, WebhookEndpoint, WebhookUrl, WebhookUrlError,
    MAX_WEBHOOK_ENDPOINTS, PING_EVENT_TYPE,
};
// The catalogue's values: price, description, photos, tags, and the case fold of name search.
pub use pet::{
    fold_case, Currency, CurrencyError, ItemError, ListError, NamePosition, NamePrefix,
    NamePrefixError, PetDescription, PetDescriptionError, PetDetails, PetSearch, PhotoUrl,
    PhotoUrlError, PhotoUrls, PhotoUrlsError, Price, PriceAmountError, PriceError, Tag, TagError,
    Tags, TagsError,
};
pub use pet::{
    CategoryId, CategoryIdError, NewPet, Patch, Pet, PetChange, PetChangeError, PetChangeFields,
    PetChangeInvalid, PetField, PetId, PetIdError, PetIds, PetIdsError, PetListQuery, PetName,
    PetNameError, PetRemovalError, PetStatus, PetStatusError, PetVersion, PetVersionError,
    StatusTransitionError,
};
