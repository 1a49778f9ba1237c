//! warplint's lint rules. Each rule lives in its own module and is listed
//! once in [`REGISTRY`]; the CLI and the documentation read the registry.
//!
//! The rules themselves arrive with `warplint check`; this crate holds the
//! registry shape they plug into.

/// Metadata of one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable code, e.g. `SM001`.
    pub code: &'static str,
    /// Kebab-case name, e.g. `shared-bank-conflict`.
    pub name: &'static str,
    pub summary: &'static str,
}

/// Every rule warplint knows, in code order.
pub const REGISTRY: &[Rule] = &[];

/// Looks a rule up by code or name.
pub fn find(key: &str) -> Option<&'static Rule> {
    REGISTRY
        .iter()
        .find(|r| r.code.eq_ignore_ascii_case(key) || r.name == key)
}
