//! What parsing a client's JSON costs: a document a client sends must not make the strict parser
//! allocate more than a small multiple of its own size, whatever its shape (a long key over a
//! long array once made it copy the key for every element). Counted with a counting allocator,
//! so the check is exact and independent of the machine's speed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use pcp_protocol::wire::{parse_strict, read_fd, sealed_bytes};

/// Every byte allocated since the start, by any thread of this test binary.
struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout, as the system allocator's contract asks.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        // SAFETY: as for `dealloc`; the new size comes from the caller.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `{"params": {"<key>": [0, 0, …]}}`: one long key over a long array, as a client can send it.
fn long_key_over_long_array(key_len: usize, elements: usize) -> Vec<u8> {
    let key = "k".repeat(key_len);
    let array = vec!["0"; elements].join(",");
    format!("{{\"params\": {{\"{key}\": [[{array}]]}}}}").into_bytes()
}

/// Bytes allocated by `f`.
fn allocated_by(f: impl FnOnce()) -> usize {
    let before = ALLOCATED.load(Ordering::Relaxed);
    f();
    ALLOCATED.load(Ordering::Relaxed) - before
}

#[test]
fn a_long_key_over_a_long_array_costs_a_small_multiple_of_its_size() {
    let doc = long_key_over_long_array(100_000, 50_000);
    let used = allocated_by(|| {
        parse_strict(&doc, "memfd").unwrap();
    });
    // The values (50,000 numbers of 32 bytes), the key and the growth of their vector: well
    // under 64× the text. Writing out the path for every element copied the key each time.
    assert!(
        used < 64 * doc.len(),
        "parsing {} bytes allocated {used} bytes",
        doc.len()
    );
}

#[test]
fn the_same_document_through_a_sealed_memfd_reads_at_the_same_cost() {
    let doc = long_key_over_long_array(100_000, 50_000);
    let (fd, size) = sealed_bytes(&doc).unwrap();
    let used = allocated_by(|| {
        read_fd(fd, size).unwrap();
    });
    assert!(
        used < 64 * doc.len(),
        "reading {} bytes allocated {used} bytes",
        doc.len()
    );
}

#[test]
fn an_error_deep_inside_still_names_its_whole_path() {
    let doc = br#"{"params": {"a": [0, {"b": "x\u0007"}]}}"#;
    let e = parse_strict(doc, "memfd").unwrap_err().to_string();
    assert!(e.contains("memfd.params.a[1].b"), "{e}");
}
