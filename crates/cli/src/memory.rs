//! The allocator, and handing its free memory back to the system.

/// mimalloc instead of glibc's allocator: per-request buffers and many live
/// message bodies made malloc/free a fifth of the server's instructions,
/// and a growing backlog fragmented glibc's heap (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Hands the allocator's free memory back to the system. Called after
/// recovery, whose temporary structures mimalloc would otherwise keep
/// resident for a while, as if they were index (docs/benchmarks.md).
pub fn release_free_memory() {
    unsafe extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: mi_collect takes no pointers; it only frees and purges memory
    // mimalloc holds unused, and may be called from any thread at any time.
    unsafe { mi_collect(true) }
}
