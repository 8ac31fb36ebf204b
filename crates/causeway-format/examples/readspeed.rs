#[path = "../benches/mix.rs"]
mod mix;
use causeway_format::*;
use std::time::Instant;
fn best(bytes: &[u8]) -> f64 {
    let mut best = 0f64;
    for _ in 0..8 {
        let t = Instant::now();
        let mut rd = TraceReader::from_bytes(bytes).unwrap();
        let n = rd
            .events()
            .map(|e| e.unwrap())
            .fold(0u64, |a, e| a.wrapping_add(e.ts.0));
        let m = t.elapsed();
        std::hint::black_box(n);
        best = best.max(mix::N as f64 / m.as_secs_f64() / 1e6);
    }
    best
}
fn main() {
    decode_bench();
    let events = mix::mix(mix::N, false);
    let mut w = TraceWriter::new(Vec::new(), &Header::synthetic(4)).unwrap();
    for e in &events {
        w.push(e).unwrap();
    }
    let bytes = w.finish().unwrap();
    let mut w = TraceWriter::new(Vec::new(), &Header::synthetic(4)).unwrap();
    for e in &events {
        let mut e = *e;
        e.cpu = Cpu(0);
        w.push(&e).unwrap();
    }
    let one = w.finish().unwrap();
    let mut w = TraceWriter::with_options(
        Vec::new(),
        &Header::synthetic(4),
        WriterOptions {
            zstd_level: 1,
            ..Default::default()
        },
    )
    .unwrap();
    for e in &events {
        w.push(e).unwrap();
    }
    let l1 = w.finish().unwrap();
    let t = Instant::now();
    let s: u64 = events.iter().fold(0u64, |a, e| a.wrapping_add(e.ts.0));
    std::hint::black_box(s);
    println!(
        "vec iterate {:.1} M/s",
        mix::N as f64 / t.elapsed().as_secs_f64() / 1e6
    );
    println!("merged 4cpu best {:.1} M/s", best(&bytes));
    println!("merged 1cpu best {:.1} M/s", best(&one));
    println!(
        "merged 4cpu zstd1 best {:.1} M/s ({} bytes vs {})",
        best(&l1),
        l1.len(),
        bytes.len()
    );
}
#[allow(dead_code)]
pub fn decode_bench() {
    let events = mix::mix(mix::N, false);
    let mut evs: Vec<Event> = events.iter().filter(|e| e.cpu.0 == 0).copied().collect();
    evs.sort_by_key(|e| e.ts);
    let mut enc = codec::ChunkEncoder::new(evs[0].ts);
    for e in &evs {
        enc.push(e);
    }
    let raw = enc.into_bytes();
    println!("raw bytes/event {:.2}", raw.len() as f64 / evs.len() as f64);
    let mut best = 0f64;
    for _ in 0..8 {
        let t = Instant::now();
        let mut d = codec::ChunkDecoder::new(&raw, Cpu(0), evs[0].ts);
        let mut s = 0u64;
        let mut n = 0;
        while let Ok(Some(e)) = d.next_event() {
            s = s.wrapping_add(e.ts.0);
            n += 1;
        }
        std::hint::black_box(s);
        assert_eq!(n, evs.len());
        best = best.max(n as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    println!("pure decode {best:.1} M/s");
    let mut best = 0f64;
    let comp = zstd::bulk::compress(&raw, 3).unwrap();
    let mut out = Vec::with_capacity(raw.len());
    for _ in 0..8 {
        let t = Instant::now();
        out.clear();
        zstd::bulk::Decompressor::new()
            .unwrap()
            .decompress_to_buffer(&comp, &mut out)
            .unwrap();
        best = best.max(evs.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    println!(
        "zstd decompress {best:.1} M events/s ({:.0} MB/s raw)",
        best * raw.len() as f64 / evs.len() as f64
    );
}
