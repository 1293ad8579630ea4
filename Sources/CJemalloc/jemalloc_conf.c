// jemalloc reads these settings when it starts (`MALLOC_CONF` in the environment still overrides
// them for an experiment):
// - narenas:2 — two arenas, not four per core: the stages' threads hand records to each other,
//   so more arenas only hold more memory (a 1,000,000-record Bulk sync up peaked at 277 MB with
//   the default, 203 MB with two);
// - dirty_decay_ms:1000 — freed pages go back to the system within a second, not ten: a Bulk
//   job's buffers of ~100 MB are freed and built again within seconds.
const char *malloc_conf = "narenas:2,dirty_decay_ms:1000";
