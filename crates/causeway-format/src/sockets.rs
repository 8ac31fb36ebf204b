//! Sockets as the recorder saw them (format 1.4): the flow table's rows and the payload
//! types of the socket events ([`crate::event::EventKind::SockSend`] and
//! [`crate::event::EventKind::SockReady`]). Their byte layout is in `codec_sockets`.
//!
//! A flow is one end of a connection seen from the thread that used it: `local` is
//! that thread's end. Data sent on a flow arrives on the flow with the two ends
//! swapped, which is how an analysis pairs a receive-side wake-up with its sender, on
//! one host or (by the same 4-tuple) across hosts.

use serde::{Deserialize, Serialize};

/// Row number of a flow in [`crate::Tables::flows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FlowId(pub u32);

/// A socket's address family, as the kernel numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SockFamily(pub u16);

impl SockFamily {
    /// `AF_UNIX`: a local socket; its ends are kernel objects, not addresses.
    pub const UNIX: SockFamily = SockFamily(1);
    /// `AF_INET`.
    pub const INET: SockFamily = SockFamily(2);
    /// `AF_INET6`.
    pub const INET6: SockFamily = SockFamily(10);

    /// True for the IP families, whose ends are addresses and ports.
    pub fn is_ip(self) -> bool {
        self == Self::INET || self == Self::INET6
    }
}

/// The transport of a flow: the IP protocol number for IP sockets (`6` TCP, `17` UDP),
/// the socket type for Unix sockets (`1` stream, `2` datagram, `5` seqpacket).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SockProto(pub u16);

impl SockProto {
    /// TCP.
    pub const TCP: SockProto = SockProto(6);
    /// UDP.
    pub const UDP: SockProto = SockProto(17);
}

/// One end of a flow: an address and port for IP sockets (IPv4 as an IPv4-mapped IPv6
/// address), or for a Unix socket a keyed hash of the kernel object (`addr`'s first 8
/// bytes, little-endian; port 0), stable while it lives and never its address.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Endpoint {
    /// IPv6 (or IPv4-mapped) address, or the object's identity.
    pub addr: [u8; 16],
    /// Port in host byte order (0 for Unix sockets).
    pub port: u16,
}

impl Endpoint {
    /// The end of an IPv4 socket.
    pub fn v4(addr: [u8; 4], port: u16) -> Endpoint {
        let mut a = [0u8; 16];
        a[10] = 0xff;
        a[11] = 0xff;
        a[12..].copy_from_slice(&addr);
        Endpoint { addr: a, port }
    }

    /// The end of a Unix socket, from its object identity.
    pub fn object(id: u64) -> Endpoint {
        let mut a = [0u8; 16];
        a[..8].copy_from_slice(&id.to_le_bytes());
        Endpoint { addr: a, port: 0 }
    }

    /// True when nothing is known of this end (an unconnected socket's remote end).
    pub fn is_unspecified(&self) -> bool {
        let v4_any = self.addr[..10].iter().all(|&b| b == 0)
            && (self.addr[10..12] == [0xff, 0xff] || self.addr[10..12] == [0, 0])
            && self.addr[12..].iter().all(|&b| b == 0);
        v4_any && self.port == 0
    }

    /// The IP address, as `std` types it (an IPv4-mapped address as IPv4).
    pub fn ip(&self) -> std::net::IpAddr {
        let v6 = std::net::Ipv6Addr::from(self.addr);
        match v6.to_ipv4_mapped() {
            Some(v4) => std::net::IpAddr::V4(v4),
            None => std::net::IpAddr::V6(v6),
        }
    }
}

/// One flow: a socket's two ends from the side of the thread that used it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Flow {
    /// Address family.
    pub family: SockFamily,
    /// Transport.
    pub proto: SockProto,
    /// This side's end.
    pub local: Endpoint,
    /// The other side's end (unspecified for an unconnected datagram socket that sent).
    pub remote: Endpoint,
}

impl Flow {
    /// The row a reader puts where a lost table block's flows were: family 0, which
    /// pairs with nothing.
    pub fn missing() -> Flow {
        Flow {
            family: SockFamily(0),
            proto: SockProto(0),
            local: Endpoint::default(),
            remote: Endpoint::default(),
        }
    }

    /// The same flow seen from the other end.
    pub fn reversed(&self) -> Flow {
        Flow {
            local: self.remote,
            remote: self.local,
            ..*self
        }
    }

    /// The same connection as seen through a socket of the other IP family: an IPv4
    /// peer of a dual-stack server (a socket on `[::]`, Go's and Java's default) has an
    /// AF_INET socket while the server's is AF_INET6, and the trace stores both ends
    /// IPv4-mapped, so only the family differs. `None` unless both ends are IPv4.
    pub fn other_ip_family(&self) -> Option<Flow> {
        let v4 = |e: &Endpoint| e.ip().is_ipv4();
        let family = match self.family {
            SockFamily::INET => SockFamily::INET6,
            SockFamily::INET6 => SockFamily::INET,
            _ => return None,
        };
        (v4(&self.local) && v4(&self.remote)).then_some(Flow { family, ..*self })
    }

    /// Short text: `tcp 127.0.0.1:5000 -> 127.0.0.1:41230`, `unix stream`.
    pub fn label(&self) -> String {
        if self.family.is_ip() {
            let t = match self.proto {
                SockProto::TCP => "tcp",
                SockProto::UDP => "udp",
                _ => "ip",
            };
            format!(
                "{t} {} -> {}",
                endpoint_text(&self.local),
                endpoint_text(&self.remote)
            )
        } else if self.family == SockFamily::UNIX {
            let t = match self.proto.0 {
                1 => "stream",
                2 => "dgram",
                5 => "seqpacket",
                _ => "socket",
            };
            format!("unix {t}")
        } else {
            format!("family {}", self.family.0)
        }
    }
}

fn endpoint_text(e: &Endpoint) -> String {
    match e.ip() {
        std::net::IpAddr::V4(a) => format!("{a}:{}", e.port),
        std::net::IpAddr::V6(a) => format!("[{a}]:{}", e.port),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_and_labels() {
        let f = Flow {
            family: SockFamily::INET,
            proto: SockProto::TCP,
            local: Endpoint::v4([127, 0, 0, 1], 5000),
            remote: Endpoint::v4([127, 0, 0, 1], 41230),
        };
        assert_eq!(f.label(), "tcp 127.0.0.1:5000 -> 127.0.0.1:41230");
        assert_eq!(f.reversed().reversed(), f);
        assert_eq!(f.reversed().local.port, 41230);
        assert!(Endpoint::v4([0, 0, 0, 0], 0).is_unspecified());
        assert!(Endpoint::default().is_unspecified());
        assert!(!Endpoint::object(7).is_unspecified());
    }
}
