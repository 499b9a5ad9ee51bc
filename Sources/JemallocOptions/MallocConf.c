// jemalloc reads its options from this symbol, if the program defines it, before the first
// allocation.
//
// Freed memory goes back to the kernel: pages unused for a second are purged (dirty_decay_ms,
// with muzzy pages released at once), by a background thread, so a process that has gone
// quiet after a burst (a flood of connections, a large import) shrinks without waiting for its
// next allocation. Hearth once kept every freed page (dirty_decay_ms:-1), and resident memory
// stayed at any peak a client could push it to.
//
// oversize_threshold:0 serves large allocations from the ordinary arenas: jemalloc's
// dedicated arena for them purges at once, and scrypt takes and frees 16 MiB per password hash,
// so each hash would fault its pages back in (4,096 faults) and password sign-ins ran 20% slower.
// In the ordinary arenas a hashing thread reuses the same pages hash after hash, well within
// the decay time.
const char *malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,oversize_threshold:0";
