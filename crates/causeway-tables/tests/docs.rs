//! docs/tables.md lists every table and column the code declares, word for word: the
//! reference is generated from the declarations and kept between two markers.
//! `CAUSEWAY_BLESS=1 cargo test -p causeway-tables --test docs` rewrites it.

const BEGIN: &str =
    "<!-- tables: begin (generated from crates/causeway-tables/src/schema.rs) -->\n";
const END: &str = "<!-- tables: end -->";

#[test]
fn docs_list_every_table_and_column_the_code_declares() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/tables.md");
    let text = std::fs::read_to_string(path).expect("docs/tables.md");
    let (head, rest) = text
        .split_once(BEGIN)
        .expect("begin marker in docs/tables.md");
    let (body, tail) = rest.split_once(END).expect("end marker in docs/tables.md");
    let want = causeway_tables::catalog_markdown();
    if body != want {
        if std::env::var_os("CAUSEWAY_BLESS").is_some() {
            std::fs::write(path, format!("{head}{BEGIN}{want}{END}{tail}")).unwrap();
            return;
        }
        panic!("docs/tables.md is out of date with the schema (CAUSEWAY_BLESS=1 rewrites it)");
    }
}

#[test]
fn every_table_has_a_distinct_name_no_other_ends_with() {
    // `causeway sql` finds a table's files by the suffix `/<name>.parquet`; names must
    // also be distinct so each is one SQL table.
    let names: Vec<&str> = causeway_tables::catalog().iter().map(|t| t.name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        names.len(),
        "duplicate table names: {names:?}"
    );
    for t in causeway_tables::catalog() {
        let cols: Vec<&str> = t
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(&cols[..2], &["trace_id", "host"], "{}", t.name);
        let mut c = cols.clone();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), cols.len(), "duplicate columns in {}", t.name);
    }
}
