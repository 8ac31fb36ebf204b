//! Column types and the `table!` macro: one declaration per table gives its builders,
//! its Arrow schema and its documentation, so the three cannot drift apart.

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_schema::{DataType, Field};
use std::sync::Arc;

/// A column's type: its Arrow type and the builder that fills it.
pub trait ColType {
    /// The Arrow builder of the column.
    type Builder: ArrayBuilder + Default;
    /// The Arrow type.
    fn data_type() -> DataType;
    /// The type as docs/tables.md names it.
    const SQL: &'static str;
}

/// 64-bit signed integer: times (ns), ids, counts. Signed because every SQL engine
/// handles BIGINT the same way; unsigned 64-bit columns are not portable.
pub struct I64;
/// Text.
pub struct Str;
/// True or false.
pub struct Bool;
/// A floating-point number (shares, fractions).
pub struct F64;
/// A list of 64-bit integers (vertex ids of a knot, a sink's chain).
pub struct I64s;

impl ColType for I64 {
    type Builder = Int64Builder;
    fn data_type() -> DataType {
        DataType::Int64
    }
    const SQL: &'static str = "BIGINT";
}

impl ColType for Str {
    type Builder = StringBuilder;
    fn data_type() -> DataType {
        DataType::Utf8
    }
    const SQL: &'static str = "VARCHAR";
}

impl ColType for Bool {
    type Builder = BooleanBuilder;
    fn data_type() -> DataType {
        DataType::Boolean
    }
    const SQL: &'static str = "BOOLEAN";
}

impl ColType for F64 {
    type Builder = Float64Builder;
    fn data_type() -> DataType {
        DataType::Float64
    }
    const SQL: &'static str = "DOUBLE";
}

impl ColType for I64s {
    type Builder = ListBuilder<Int64Builder>;
    fn data_type() -> DataType {
        DataType::List(Arc::new(Field::new("item", DataType::Int64, true)))
    }
    const SQL: &'static str = "BIGINT[]";
}

/// One column as documented: name, SQL type, meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDoc {
    /// Column name.
    pub name: &'static str,
    /// Type, in SQL words.
    pub sql_type: &'static str,
    /// What it holds.
    pub doc: &'static str,
}

/// Declare a table: `Name = "sql_name", "what a row is" { col: Type = "doc", ... }`.
/// Every table also has `trace_id` and `host` first, filled when a batch is finished.
macro_rules! table {
    (
        $(#[$m:meta])*
        $name:ident = $tname:literal, $tdoc:literal {
            $($col:ident : $ty:ident = $cdoc:literal),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Default)]
        pub struct $name {
            $(
                #[doc = $cdoc]
                pub $col: <$crate::columns::$ty as $crate::columns::ColType>::Builder,
            )*
        }

        impl $crate::columns::Table for $name {
            const NAME: &'static str = $tname;
            const DOC: &'static str = $tdoc;

            fn columns() -> Vec<$crate::columns::ColumnDoc> {
                vec![$($crate::columns::ColumnDoc {
                    name: stringify!($col),
                    sql_type: <$crate::columns::$ty as $crate::columns::ColType>::SQL,
                    doc: $cdoc,
                }),*]
            }

            fn fields() -> Vec<arrow_schema::Field> {
                vec![$(arrow_schema::Field::new(
                    stringify!($col),
                    <$crate::columns::$ty as $crate::columns::ColType>::data_type(),
                    true,
                )),*]
            }

            fn rows(&self) -> usize {
                [$(arrow_array::builder::ArrayBuilder::len(&self.$col)),*][0]
            }

            fn finish_columns(&mut self) -> Vec<arrow_array::ArrayRef> {
                vec![$(arrow_array::builder::ArrayBuilder::finish(&mut self.$col)),*]
            }
        }
    };
}
pub(crate) use table;

/// What every declared table can do.
pub trait Table: Default + Send {
    /// The table's SQL name (and file name, with `.parquet`).
    const NAME: &'static str;
    /// What one row is.
    const DOC: &'static str;
    /// Its own columns, documented (without `trace_id` and `host`).
    fn columns() -> Vec<ColumnDoc>;
    /// Its own columns' Arrow fields.
    fn fields() -> Vec<Field>;
    /// Rows appended since the last finish.
    fn rows(&self) -> usize;
    /// The columns built so far; the builders start again empty.
    fn finish_columns(&mut self) -> Vec<arrow_array::ArrayRef>;
}
