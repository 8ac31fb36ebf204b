//! placeholder, see issue 2
