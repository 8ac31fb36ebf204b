//! causeway's SQL on an Apache Ballista cluster.
//!
//! Ballista runs DataFusion's plans across processes: a scheduler cuts a query into
//! stages, executors run the stages' tasks and read the Parquet files themselves. So
//! every executor must see the table directories at the path the client names (a shared
//! directory, or the same files on each host). This crate starts both kinds of process
//! from Ballista's own libraries ([`scheduler`], [`executor`]) and adds only causeway's
//! functions to their registries, which a plan that calls `dur()` needs on every side;
//! [`connect`] opens a [`causeway_sql::Session`] whose queries run on the cluster, with
//! the same tables and views as an embedded one, so the same SQL answers in both.

mod client;
mod error;
pub mod executor;
pub mod logging;
pub mod scheduler;

pub use client::connect;
pub use error::ClusterError;

use std::net::{SocketAddr, ToSocketAddrs};

/// The runtime each process serves from.
fn runtime() -> Result<tokio::runtime::Runtime, ClusterError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ClusterError::Runtime)
}

/// `HOST:PORT` split, with the port checked (the host may be a name).
pub fn host_port(s: &str) -> Result<(String, u16), ClusterError> {
    let bad = || ClusterError::Address(s.to_string());
    let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.trim_matches(['[', ']']).to_string(), port))
}

/// `HOST:PORT` resolved to the address to listen on.
pub fn listen_addr(s: &str) -> Result<SocketAddr, ClusterError> {
    host_port(s)?;
    s.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| ClusterError::Address(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_need_a_host_and_a_port() {
        assert_eq!(
            host_port("node7:50050").unwrap(),
            ("node7".to_string(), 50050)
        );
        assert_eq!(host_port("[::1]:9").unwrap(), ("::1".to_string(), 9));
        assert!(host_port("node7").is_err());
        assert!(host_port(":50050").is_err());
        assert!(host_port("node7:http").is_err());
        assert!(host_port("node7:70000").is_err());
        assert_eq!(listen_addr("127.0.0.1:50050").unwrap().port(), 50050);
    }
}
