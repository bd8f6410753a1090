//! The pet store's domain: the values a pet is made of, the rules that keep them valid, the
//! status life cycle, the orders that move pets through it, and the API keys that give access to
//! them. Nothing here knows about HTTP, SQL or async runtimes; adapters turn their
//! own representations into these types with each type's `parse`/`new` and get a typed error back.

mod api_key;
mod category_id;
mod decimal;
mod listing;
mod order;
mod pet;
mod pet_id;
mod pet_name;
mod pet_status;

pub use api_key::{
    ApiKey, KeyId, KeyIdError, KeyName, KeyNameError, KeyScope, KeyScopeError, KeyState,
};
pub use category_id::{CategoryId, CategoryIdError};
pub use listing::{PetIds, PetIdsError, PetLimit, PetLimitError, PetListQuery};
pub use order::{
    NewOrder, Order, OrderAction, OrderConflict, OrderId, OrderStatus, OrderStatusError,
};
pub use pet::{NewPet, Pet};
pub use pet_id::{PetId, PetIdError};
pub use pet_name::{is_bidi_control, is_invisible, PetName, PetNameError};
pub use pet_status::{PetStatus, PetStatusError, StatusTransitionError};
