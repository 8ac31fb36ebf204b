//! Parsing of the recorder's settings: event groups, stack windows, buffer sizes.

use causeway_record::ConfigError;
use causeway_record::config::{EventSet, default_buffer_per_cpu, parse_stack_window};

#[test]
fn event_sets_parse() {
    assert_eq!(EventSet::parse("all").unwrap(), EventSet::ALL);
    assert_eq!(EventSet::parse("default").unwrap(), EventSet::DEFAULT);
    let d = EventSet::parse("default").unwrap();
    assert!(!d.syscall && d.sched && d.block);
    assert!(EventSet::parse("default,syscall").unwrap().syscall);
    let s = EventSet::parse("all,-net,-syscall").unwrap();
    assert!(s.sched && !s.net && !s.syscall);
    let s = EventSet::parse("sched,block").unwrap();
    assert_eq!(s.bits(), 1 | 16);
    assert!(
        EventSet::parse("sched,bogus")
            .unwrap_err()
            .to_string()
            .contains("bogus")
    );
    for empty in ["", ",", " , ,"] {
        assert_eq!(
            EventSet::parse(empty),
            Err(ConfigError::NoEventGroup(empty.to_string()))
        );
    }
    // A list that starts by removing a group removes it from the default.
    let s = EventSet::parse("-net").unwrap();
    assert_eq!(
        s,
        EventSet {
            net: false,
            ..EventSet::DEFAULT
        }
    );
    let none =
        EventSet::parse("-sched,-proc,-irq,-softirq,-block,-net,-signal,-timer,-socket,-goroutine")
            .unwrap();
    assert!(none.is_empty());
    let s = EventSet::parse("signal,timer").unwrap();
    assert!(s.signal && s.timer && !s.sched);
    assert_eq!(s.bits(), 128 | 256);
    let s = EventSet::parse("socket").unwrap();
    assert_eq!(s.bits(), 512);
    let s = EventSet::parse("goroutine").unwrap();
    assert_eq!(s.bits(), 1024);
    let default = EventSet::DEFAULT;
    assert!(default.sock && default.go);
}

#[test]
fn stack_windows_parse() {
    assert_eq!(parse_stack_window("8K").unwrap(), 8192);
    assert_eq!(parse_stack_window("4096").unwrap(), 4096);
    assert_eq!(parse_stack_window("16KiB").unwrap(), 16384);
    assert!(
        parse_stack_window("3000")
            .unwrap_err()
            .to_string()
            .contains("power of two")
    );
    assert!(parse_stack_window("64K").is_err());
    assert!(
        parse_stack_window("big")
            .unwrap_err()
            .to_string()
            .contains("bad stack window")
    );
}

#[test]
fn buffers_are_powers_of_two() {
    for n in [1, 2, 3, 64, 1000] {
        let b = default_buffer_per_cpu(n);
        assert!(b.is_power_of_two() && b >= 1 << 20, "{n} -> {b}");
    }
    assert_eq!(default_buffer_per_cpu(2), 8 << 20);
}
