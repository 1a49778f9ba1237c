//! `&'static str` read back from data (the CLI's results cache): the
//! names the analyzer and the rules give as static strings (budget names,
//! rule codes, finding kinds) are looked up in, or added once to, one table
//! for the process. The table is bounded (`MAX_INTERNED_STRINGS` strings of
//! at most `MAX_INTERNED_BYTES` bytes): data that would pass it, which only
//! a damaged or foreign cache entry can hold, fails to deserialize and is
//! not trusted.

use std::collections::HashSet;
use std::sync::Mutex;

use serde::{Deserialize, Deserializer};

use crate::budget::{MAX_INTERNED_BYTES, MAX_INTERNED_STRINGS};

/// A static name, as a field type a `#[derive(Deserialize)]` can read
/// through [`deserialize`] (the derive asks a field written `&'static str`
/// to borrow from the data for ever; through this alias it does not).
pub type Name = &'static str;

static TABLE: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

/// `s` as a string that lives as long as the process; `None` when the
/// table is full or `s` is too long.
pub fn intern(s: &str) -> Option<&'static str> {
    let mut table = TABLE.lock().ok()?;
    let table = table.get_or_insert_with(HashSet::new);
    if let Some(t) = table.get(s) {
        return Some(t);
    }
    if s.len() > MAX_INTERNED_BYTES || table.len() >= MAX_INTERNED_STRINGS {
        return None;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    table.insert(leaked);
    Some(leaked)
}

/// `#[serde(deserialize_with = "…")]` for a `&'static str` field.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    intern(&s).ok_or_else(|| serde::de::Error::custom("too many distinct names"))
}

/// `#[serde(deserialize_with = "…")]` for a `Vec<&'static str>` field.
pub fn deserialize_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<&'static str>, D::Error> {
    let v = Vec::<String>::deserialize(d)?;
    v.iter()
        .map(|s| intern(s).ok_or_else(|| serde::de::Error::custom("too many distinct names")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_one_string_and_the_table_is_bounded() {
        let a = intern("MAX_LOOP_ITERATIONS").unwrap();
        let b = intern(&String::from("MAX_LOOP_ITERATIONS")).unwrap();
        assert!(std::ptr::eq(a, b));
        assert_eq!(intern(&"x".repeat(MAX_INTERNED_BYTES + 1)), None);
    }
}
