import Foundation
import GRDB
import JSON
import Soups
import Testing

/// The store's schema is versioned: a store written by an earlier release opens (and is brought
/// up to date once), and a store a newer release wrote is refused rather than misread.
@Suite struct StoreSchemaTests {
    /// A store as the first releases wrote it: no recorded migrations, a journal without its later
    /// columns, a soup table without `_confirmed` and with full bookkeeping indexes.
    static func writeFirstReleaseStore(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE soup_attrs (id INTEGER PRIMARY KEY AUTOINCREMENT, soupName TEXT NOT NULL UNIQUE, indexes TEXT NOT NULL);
                CREATE TABLE syncs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, type TEXT NOT NULL, soupName TEXT NOT NULL,
                  target TEXT NOT NULL, options TEXT NOT NULL, status TEXT NOT NULL, progress INTEGER NOT NULL, totalSize INTEGER NOT NULL,
                  maxTimeStamp INTEGER NOT NULL, startTime INTEGER NOT NULL, endTime INTEGER NOT NULL, error TEXT NOT NULL);
                CREATE TABLE runs (id TEXT PRIMARY KEY, pipeline TEXT NOT NULL, status TEXT NOT NULL, exitCode INTEGER,
                  startedAt TEXT NOT NULL, finishedAt TEXT, reportDir TEXT, record TEXT NOT NULL);
                CREATE TABLE sync_journal (id INTEGER PRIMARY KEY AUTOINCREMENT, syncName TEXT NOT NULL, soupName TEXT NOT NULL,
                  entryId INTEGER NOT NULL, operation TEXT NOT NULL, objectType TEXT NOT NULL, recordId TEXT, payload TEXT NOT NULL,
                  sentAt INTEGER NOT NULL);
                INSERT INTO soup_attrs (soupName, indexes) VALUES ('Accounts', '[{"path":"Name","type":"string"}]');
                CREATE TABLE TABLE_1 (id INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT NOT NULL, created INTEGER NOT NULL,
                  lastModified INTEGER NOT NULL, _local INTEGER NOT NULL DEFAULT 0, _syncId INTEGER, TABLE_1_0 TEXT);
                CREATE INDEX TABLE_1_local ON TABLE_1 (_local);
                INSERT INTO TABLE_1 (soup, created, lastModified, TABLE_1_0)
                  VALUES ('{"Name":"Old","_soupEntryId":1,"_soupLastModifiedDate":1}', 1, 1, 'Old');
                """)
        }
        try queue.close()
    }

    @Test func aStoreWrittenByTheFirstReleaseOpensAndIsBroughtUpToDate() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        try Self.writeFirstReleaseStore(at: path)

        let store = try SoupStore(path: path)
        let names = try await store.entries(in: "Accounts", limit: 10).compactMap { $0["Name"]?.stringValue }
        #expect(names == ["Old"])
        try store.close()

        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try await queue.read { db in
            let journal = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(sync_journal)").map { $0["name"] as String })
            #expect(journal.isSuperset(of: ["serverSentAt", "settledBy", "linkField", "linkSoup", "linkEntryId", "bulkJobId"]))
            let soup = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(TABLE_1)").map { $0["name"] as String })
            #expect(soup.contains("_confirmed"))
            let index = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'TABLE_1_local'") ?? ""
            #expect(index.contains("WHERE _local = 1"), "the full index became a partial one")
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM grdb_migrations") == 3)
        }
        // Opening again changes nothing.
        try SoupStore(path: path).close()
    }

    @Test func aStoreANewerReleaseWroteIsRefused() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.sqlite").path
        try SoupStore(path: path).close()
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9: from the future')") }
        try queue.close()
        #expect(throws: SoupStoreError.newerSchema(path: path, migrations: ["v9: from the future"])) {
            try SoupStore(path: path)
        }
    }
}
