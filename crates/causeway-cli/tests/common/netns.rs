//! Two "hosts" on one machine for the multi-host tests: two network namespaces joined
//! by a veth pair, each end with its own address, removed again when dropped.

use std::process::Command;

/// A pair of network namespaces, `a` at `10.K.N.1` and `b` at `10.K.N.2`.
pub struct NetPair {
    /// The namespaces' names.
    pub a: String,
    /// See `a`.
    pub b: String,
    /// The address of `a`'s end.
    pub addr_a: String,
    /// The address of `b`'s end.
    pub addr_b: String,
}

fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        o.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

impl NetPair {
    /// Create pair number `k` (0-9) of this process (names and subnet from the
    /// process's id and `k`, so that no two pairs share them).
    pub fn new(k: u32) -> NetPair {
        let id = std::process::id();
        let (a, b) = (format!("cw{id}{k}a"), format!("cw{id}{k}b"));
        let (va, vb) = (format!("cw{id}{k}x"), format!("cw{id}{k}y"));
        let net = 1 + id % 250;
        let k = 70 + k;
        let p = NetPair {
            a,
            b,
            addr_a: format!("10.{k}.{net}.1"),
            addr_b: format!("10.{k}.{net}.2"),
        };
        ip(&["netns", "add", &p.a]);
        ip(&["netns", "add", &p.b]);
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb]);
        ip(&["link", "set", &va, "netns", &p.a]);
        ip(&["link", "set", &vb, "netns", &p.b]);
        for (ns, dev, addr) in [(&p.a, &va, &p.addr_a), (&p.b, &vb, &p.addr_b)] {
            ip(&["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        p
    }

    /// Arguments that run a program in namespace `ns`: `ip netns exec NS`.
    pub fn exec(ns: &str) -> Vec<String> {
        vec!["ip".into(), "netns".into(), "exec".into(), ns.into()]
    }

    /// Wait (up to 10 s) until something in `ns` listens on TCP `port`.
    pub fn wait_listening(ns: &str, port: u16) {
        for _ in 0..200 {
            let o = Command::new("ip")
                .args(["netns", "exec", ns, "ss", "-Hltn"])
                .arg(format!("sport = :{port}"))
                .output()
                .expect("run ss");
            if !o.stdout.is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("nothing listens on port {port} in {ns} after 10 s");
    }
}

impl Drop for NetPair {
    fn drop(&mut self) {
        // Deleting a namespace removes its end of the veth pair, and with it the other.
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
