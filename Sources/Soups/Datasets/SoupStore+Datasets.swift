import GRDB
import JSON

extension SoupStore {
    /// The datasets: each stage's output records, in the store's sibling file.
    public var datasets: Datasets { Datasets(store: self) }
}

/// The datasets: each stage's output records, in the store's sibling file. Over the store's own database writer.
public struct Datasets: Sendable {
    let store: SoupStore
    var datasetPool: DatabasePool? { store.datasetPool }
    var path: String { store.path }

    /// Starts (or restarts) a dataset: a stage's output records, kept in the store so the stages
    /// that read them — in this run or in a later `--only` run — can stream them back.
    public func begin(_ name: String, runId: String) async throws {
        try await datasetWriter().write { db in
            try db.execute(sql: "DELETE FROM dataset_records WHERE dataset = ?", arguments: [name])
            try db.execute(sql: """
                INSERT INTO datasets (name, runId, count, complete, createdAt) VALUES (?, ?, 0, 0, strftime('%s','now'))
                ON CONFLICT(name) DO UPDATE SET runId = excluded.runId, count = 0, complete = 0, createdAt = excluded.createdAt
                """, arguments: [name, runId])
        }
    }

    /// Appends a batch of records to a dataset in one transaction; returns the sequence number of
    /// the last record (the dataset's count).
    @discardableResult
    public func append(_ name: String, records: [JSONValue]) async throws -> Int64 {
        // Serialized before the transaction, into one buffer: the store's single writer only
        // inserts, and no string or argument list is made per record (a million records made
        // millions of allocations, which threads streaming records contend for).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(records.count * 160)
        var ends: [Int] = []
        ends.reserveCapacity(records.count)
        for record in records {
            record.write(into: &bytes)
            ends.append(bytes.count)
        }
        return try await datasetWriter().write { [bytes, ends] db in
            guard let count = try Int64.fetchOne(db, sql: "SELECT count FROM datasets WHERE name = ?", arguments: [name]) else {
                throw SoupStoreError.unknownDataset(name)
            }
            let insert = try RawStatement(db, sql: "INSERT INTO dataset_records (dataset, seq, record) VALUES (?, ?, ?)")
            insert.bind(text: name, at: 1)
            var seq = count
            try bytes.withUnsafeBufferPointer { buffer in
                var start = 0
                for end in ends {
                    seq += 1
                    insert.bind(seq, at: 2)
                    try insert.execute(bindingText: UnsafeBufferPointer(rebasing: buffer[start..<end]), at: 3)
                    start = end
                }
            }
            try db.execute(sql: "UPDATE datasets SET count = ? WHERE name = ?", arguments: [seq, name])
            return seq
        }
    }

    /// Marks a dataset complete: its producer finished without failing.
    public func finish(_ name: String) async throws {
        try await datasetWriter().write { db in
            try db.execute(sql: "UPDATE datasets SET complete = 1 WHERE name = ?", arguments: [name])
        }
    }

    /// The state of a dataset, or `nil` when the store has none of that name.
    public func info(_ name: String) async throws -> DatasetInfo? {
        guard let datasetPool else { return nil }
        return try await datasetPool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM datasets WHERE name = ?", arguments: [name]).map { row in
                DatasetInfo(name: row["name"], runId: row["runId"], count: row["count"], complete: row["complete"])
            }
        }
    }

    /// Up to `limit` records of a dataset after sequence number `afterSeq` (1-based), with their
    /// sequence numbers, so a reader can stream any size in constant memory.
    public func records(_ name: String, afterSeq: Int64 = 0, limit: Int = 1000) async throws -> [(seq: Int64, record: JSONValue)] {
        guard let datasetPool else { return [] }
        let rows = try await datasetPool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT seq, record FROM dataset_records WHERE dataset = ? AND seq > ? ORDER BY seq LIMIT ?",
                arguments: [name, afterSeq, limit]
            ).map { row in (seq: row["seq"] as Int64, text: row["record"] as String) }
        }
        // Parsed outside the read, on both cores for a large page.
        return try await rows.concurrentMap { row in (row.seq, try JSONParser.parse(row.text)) }
    }

    /// The datasets file's pool, for writing (a store opened for writing always has one).
    private func datasetWriter() throws -> DatabasePool {
        guard let datasetPool else { throw SoupStoreError.readOnly(path) }
        return datasetPool
    }

    /// Streams the records of `names`, one dataset after the other, `batchSize` at a time (with
    /// `firstBatchSize`, the first batch that large and each next one twice the one before, up to
    /// `batchSize`).
    ///
    /// With `feed`, a dataset still being written is followed as it grows: when the reader has
    /// caught up, it waits for the producer's next batch, until the producer finishes.
    public func batches(_ names: [String], batchSize: Int = 1000, firstBatchSize: Int? = nil,
                               feed: (any DatasetFeed)? = nil) -> DatasetBatches {
        DatasetBatches(store: store, names: names, batchSize: batchSize, firstBatchSize: firstBatchSize ?? batchSize, feed: feed)
    }
}

/// Tells readers of datasets that are still being written when more records arrive.
public protocol DatasetFeed: Sendable {
    /// A number that changes whenever the dataset `name` grows or its producer ends.
    func version(of name: String) async -> Int

    /// The records of `name` after sequence number `seq` (at most `limit`) when the feed holds them
    /// in memory — the producer's own values — or `nil`: then they are read from the store. A
    /// dataset the feed alone holds (never stored) gives `[]` when the reader has caught up.
    func records(of name: String, after seq: Int64, limit: Int) async throws -> [JSONValue]?

    /// The reader is done with `name` (it read to the end).
    func finishedReading(_ name: String) async

    /// Waits until the dataset changes after `version`; returns `false` at once when its producer
    /// has ended (or is not running), `true` when more records may be there. Throws when the
    /// producer failed or the reader is cancelled.
    func waitForMore(in name: String, after version: Int) async throws -> Bool
}

/// What the store knows about a dataset.
public struct DatasetInfo: Sendable, Equatable {
    public var name: String
    public var runId: String
    public var count: Int
    /// `false` while the producing stage runs, or when it failed.
    public var complete: Bool
}

/// The records of one or more datasets in batches, read a page at a time (constant memory).
public struct DatasetBatches: AsyncSequence, Sendable {
    public typealias Element = [JSONValue]

    let store: SoupStore
    let names: [String]
    let batchSize: Int
    /// The size of the first batch; each next one is twice the one before, up to `batchSize`.
    let firstBatchSize: Int
    let feed: (any DatasetFeed)?

    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let store: SoupStore
        let names: [String]
        let maxBatchSize: Int
        let feed: (any DatasetFeed)?
        var batchSize: Int
        var nameIndex = 0
        var cursor: Int64 = 0

        public mutating func next() async throws -> [JSONValue]? {
            defer { batchSize = batchSize > maxBatchSize - batchSize ? maxBatchSize : batchSize * 2 }
            while nameIndex < names.count {
                let name = names[nameIndex]
                let version = await feed?.version(of: name) ?? 0
                if let records = try await feed?.records(of: name, after: cursor, limit: batchSize) {
                    if !records.isEmpty {
                        cursor += Int64(records.count)
                        return records
                    }
                } else {
                    let page = try await store.datasets.records(name, afterSeq: cursor, limit: batchSize)
                    if let last = page.last {
                        cursor = last.seq
                        return page.map(\.record)
                    }
                }
                if let feed, try await feed.waitForMore(in: name, after: version) { continue }
                await feed?.finishedReading(name)
                nameIndex += 1
                cursor = 0
            }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        let most = Swift.max(1, batchSize)
        return AsyncIterator(store: store, names: names, maxBatchSize: most, feed: feed, batchSize: Swift.max(1, Swift.min(firstBatchSize, most)))
    }
}
