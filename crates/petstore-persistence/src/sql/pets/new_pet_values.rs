//! A new pet's values as an insert binds them: a row of a `VALUES` list (SQLite,
//! `multi_row`) or a row of PostgreSQL's arrays (`postgres_insert`).

use diesel::backend::Backend;
use diesel::query_builder::AstPass;
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType, Nullable, Text};
use diesel::QueryResult;
use petstore_domain::{fold_case, NewPet};

use super::pet_row::DetailColumns;
use crate::sql::engine::multi_row::BindValues;

/// A new pet's values, in the insert's column order.
pub(crate) struct PetValues<'a> {
    pub(super) name: &'a str,
    pub(super) category_id: i64,
    pub(super) status: &'a str,
    pub(super) details: DetailColumns<'a>,
    pub(super) name_folded: String,
}

impl<'a> PetValues<'a> {
    pub(super) fn of(new_pet: &'a NewPet) -> Self {
        Self {
            name: new_pet.name().as_str(),
            category_id: new_pet.category_id().get(),
            status: new_pet.status().as_str(),
            details: DetailColumns::of(new_pet.details()),
            name_folded: fold_case(new_pet.name().as_str()),
        }
    }
}

impl<DB> BindValues<DB> for PetValues<'_>
where
    DB: Backend + HasSqlType<Text> + HasSqlType<BigInt>,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    Option<i64>: ToSql<Nullable<BigInt>, DB>,
    for<'x> Option<&'x str>: ToSql<Nullable<Text>, DB>,
    Option<String>: ToSql<Nullable<Text>, DB>,
{
    fn push_binds<'b>(&'b self, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let details = &self.details;
        out.push_bind_param::<Text, str>(self.name)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.category_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(self.status)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<BigInt>, Option<i64>>(&details.price_minor)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, Option<&str>>(&details.price_currency)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, Option<&str>>(&details.description)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, Option<String>>(&details.photo_urls)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, Option<String>>(&details.tags)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&self.name_folded)
    }
}
