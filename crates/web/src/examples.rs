//! The verbs sessions in `scenarios/verbs/`, embedded: the playground opens them by name
//! (`/playground?example=write`) and the chapters' `{{vfig:...}}` and `{{ladder:...}}`
//! placeholders run them.

use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "../../scenarios/verbs/"]
#[include = "*.toml"]
struct Sessions;

/// Longest example name: the file names are short snake_case words.
const MAX_NAME: usize = 40;

/// Whether `name` is an example's name: lowercase letters, digits and `_`.
fn well_formed(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The text of example `name` (`scenarios/verbs/{name}.toml`).
pub fn get(name: &str) -> Option<String> {
    if !well_formed(name) {
        return None;
    }
    let f = Sessions::get(&format!("{name}.toml"))?;
    String::from_utf8(f.data.into_owned()).ok()
}

/// Every example's name, sorted.
pub fn names() -> Vec<String> {
    let mut v: Vec<String> = Sessions::iter()
        .filter_map(|p| p.strip_suffix(".toml").map(str::to_string))
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn examples_are_found_by_name_and_only_by_name() {
        assert!(super::get("write").unwrap().contains("[[step]]"));
        assert!(super::names().contains(&"drop_nth".to_string()));
        for bad in [
            "",
            "../Cargo",
            "write.toml",
            "WRITE",
            "a/b",
            &"x".repeat(41),
        ] {
            assert!(super::get(bad).is_none(), "{bad:?}");
        }
    }
}
