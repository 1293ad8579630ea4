import GRDB

/// The store's schema, versioned with GRDB migrations: each runs once per store, in order, and
/// is recorded in the store (`grdb_migrations`), so a store written by one release opens in the
/// next. A store holding migrations this release does not know was written by a newer release
/// and is refused rather than misread.
///
/// Migrations never change once released; a new schema change is a new migration at the end.
enum StoreSchema {
    /// The soup store's tables.
    static var storeMigrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: soups, syncs, runs, sync journal") { db in
            // `IF NOT EXISTS`: stores made before migrations were recorded already have them.
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS soup_attrs (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  soupName TEXT NOT NULL UNIQUE,
                  indexes TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS syncs (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  name TEXT UNIQUE,
                  type TEXT NOT NULL,
                  soupName TEXT NOT NULL,
                  target TEXT NOT NULL,
                  options TEXT NOT NULL,
                  status TEXT NOT NULL,
                  progress INTEGER NOT NULL,
                  totalSize INTEGER NOT NULL,
                  maxTimeStamp INTEGER NOT NULL,
                  startTime INTEGER NOT NULL,
                  endTime INTEGER NOT NULL,
                  error TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS runs (
                  id TEXT PRIMARY KEY,
                  pipeline TEXT NOT NULL,
                  status TEXT NOT NULL,
                  exitCode INTEGER,
                  startedAt TEXT NOT NULL,
                  finishedAt TEXT,
                  reportDir TEXT,
                  record TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS sync_journal (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  syncName TEXT NOT NULL,
                  soupName TEXT NOT NULL,
                  entryId INTEGER NOT NULL,
                  operation TEXT NOT NULL,
                  objectType TEXT NOT NULL,
                  recordId TEXT,
                  payload TEXT NOT NULL,
                  sentAt INTEGER NOT NULL);
                CREATE INDEX IF NOT EXISTS sync_journal_sync ON sync_journal (syncName);
                """)
        }
        migrator.registerMigration("v2: journal windows, parent links, Bulk job ids") { db in
            try addMissingColumns(to: "sync_journal", [("serverSentAt", "INTEGER"), ("settledBy", "INTEGER"), ("linkField", "TEXT"),
                                                       ("linkSoup", "TEXT"), ("linkEntryId", "INTEGER"), ("bulkJobId", "TEXT")], db)
        }
        migrator.registerMigration("v3: soups keep confirmed values; partial bookkeeping indexes") { db in
            for soupId in try Int64.fetchAll(db, sql: "SELECT id FROM soup_attrs") {
                let table = "TABLE_\(soupId)"
                guard try db.tableExists(table) else { continue }
                try addMissingColumns(to: table, [("_confirmed", "TEXT")], db)
                try SoupStore.createBookkeepingIndexes(for: table, db)
            }
        }
        return migrator
    }

    /// The datasets file's tables.
    static var datasetsMigrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: datasets") { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS datasets (
                  name TEXT PRIMARY KEY,
                  runId TEXT NOT NULL,
                  count INTEGER NOT NULL,
                  complete INTEGER NOT NULL,
                  createdAt INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS dataset_records (
                  dataset TEXT NOT NULL,
                  seq INTEGER NOT NULL,
                  record TEXT NOT NULL,
                  PRIMARY KEY (dataset, seq)) WITHOUT ROWID;
                """)
        }
        return migrator
    }

    /// Brings `file`'s schema up to date; refuses a file a newer release wrote.
    static func migrate(_ writer: some DatabaseWriter, with migrator: DatabaseMigrator, file: String) throws {
        let applied = try writer.read { db in try migrator.appliedIdentifiers(db) }
        let unknown = applied.subtracting(migrator.migrations)
        guard unknown.isEmpty else {
            throw SoupStoreError.newerSchema(path: file, migrations: unknown.sorted())
        }
        try migrator.migrate(writer)
    }

    /// Adds the columns a table lacks (a table made by an older release).
    private static func addMissingColumns(to table: String, _ columns: [(name: String, type: String)], _ db: Database) throws {
        let existing = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String })
        for column in columns where !existing.contains(column.name) {
            try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(column.name) \(column.type)")
        }
    }

    /// Stores made before datasets had their own file kept them in the main database: they move
    /// to the datasets file (a page at a time), and their tables are dropped.
    static func moveLegacyDatasets(from pool: DatabasePool, to datasets: DatabasePool) throws {
        let legacy = try pool.read { db in try db.tableExists("dataset_records") && db.tableExists("datasets") }
        guard legacy else { return }
        let infos = try pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM datasets") }
        for info in infos {
            let name: String = info["name"]
            try datasets.write { db in
                try db.execute(sql: "DELETE FROM dataset_records WHERE dataset = ?", arguments: [name])
                try db.execute(
                    sql: "INSERT OR REPLACE INTO datasets (name, runId, count, complete, createdAt) VALUES (?, ?, ?, ?, ?)",
                    arguments: [name, info["runId"], info["count"], info["complete"], info["createdAt"]])
            }
            var afterSeq: Int64 = 0
            while true {
                let page = try pool.read { db in
                    try Row.fetchAll(db, sql: "SELECT seq, record FROM dataset_records WHERE dataset = ? AND seq > ? ORDER BY seq LIMIT 5000",
                                     arguments: [name, afterSeq])
                }
                guard let last = page.last else { break }
                try datasets.write { db in
                    for row in page {
                        try db.execute(sql: "INSERT INTO dataset_records (dataset, seq, record) VALUES (?, ?, ?)",
                                       arguments: [name, row["seq"], row["record"]])
                    }
                }
                afterSeq = last["seq"]
            }
        }
        try pool.write { db in
            try db.execute(sql: "DROP TABLE dataset_records; DROP TABLE datasets")
        }
    }
}
