//! Several hosts' traces as one: the threads of every host in one model, so that a
//! wait on one machine can have its waker, its knot and its culprit chain on another.
//!
//! A client on host A waits for a reply from a server on host B. A's trace sees data
//! arrive on a socket; B's trace sees the server send it. [`join`] reads both and:
//!
//! 1. gives each host its own range of thread ids, CPUs and table rows
//!    ([`ids::HostIds`]), and adds the host's name to its threads' names;
//! 2. ties each wake-up by data from a remote address to the send on the host that has
//!    the flow's other end (the TCP four-tuple seen reversed, then the sequence number
//!    of the byte that arrived, [`pair`]);
//! 3. estimates each host's clock offset from those matched sends and wake-ups
//!    ([`clock`]) on top of the recordings' wall clocks, and shifts its events onto
//!    the first host's clock;
//! 4. feeds all events, in one time order, to the same model builder a single trace
//!    uses: the builder's own socket pairing then finds the remote sender as it finds
//!    a local one, and every analysis works on the joined model unchanged.
//!
//! Out of scope: addresses rewritten between the hosts (NAT, a proxy); such flows find
//! no partner and are counted per host ([`HostJoin::flows_alone`]).

pub mod clock;
mod error;
pub mod ids;
mod join;
pub mod pair;
pub mod scan;
pub mod tables;

pub use error::JoinError;
pub use join::{HostJoin, HostTrace, Joined, join, join_with};
