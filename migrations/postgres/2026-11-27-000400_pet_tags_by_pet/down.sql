DROP INDEX pet_tags_pet_id;
