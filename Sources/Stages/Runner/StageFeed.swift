import JSON
import Soups

/// The datasets of a run's stages as they are written, so a stage reading another stage's output
/// (`from`) can run alongside it on the other core, a batch behind, instead of waiting for it to end.
/// The last few batches of each dataset stay in memory: a reader keeping up takes them from here
/// rather than reading and parsing them back from the store.
///
/// A *streamed* dataset (see ``Stage/streamsToSoleReader``) is never stored: its one reader takes
/// every record from here. Its producer is held from the start until that reader is within
/// ``maximumLead`` records, and a batch leaves memory once the reader is past it.
actor StageFeed {
    /// A batch the producer stored: its records and the sequence number of the first.
    private struct Batch {
        var first: Int64
        var records: [JSONValue]
    }

    /// Records kept in memory per dataset, at most (older batches are read from the store).
    static let bufferedRecords = 20_000
    /// How far a producer may run ahead of the slowest stage reading its dataset: a reader keeping
    /// pace finds its records in memory, and the producer's core goes to the slower stage.
    static let maximumLead: Int64 = 15_000

    private enum State {
        case running
        case finished
        case failed
    }

    private var states: [String: State] = [:]
    private var versions: [String: Int] = [:]
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    private var buffers: [String: [Batch]] = [:]
    /// Per dataset, the last sequence number stored, and where each stage reading it has got to.
    private var stored: [String: Int64] = [:]
    private var readers: [String: [String: Int64]] = [:]
    private var throttled: [String: [CheckedContinuation<Void, Never>]] = [:]
    /// Streamed datasets and the one stage reading each.
    private let streamed: [String: String]
    /// Stored datasets only one stage reads, and that stage: a batch leaves memory as the stage
    /// takes it, so the stage owns the records it is given (and can change them without a copy).
    private let soleReaders: [String: String]

    /// A feed whose datasets in `streamed` (dataset → the stage reading it) stay in memory only;
    /// those in `soleReaders` (dataset → its one reader) are handed over as they are read.
    init(streamed: [String: String] = [:], soleReaders: [String: String] = [:]) {
        self.streamed = streamed
        self.soleReaders = soleReaders
        for (name, reader) in streamed { readers[name] = [reader: 0] }
    }

    /// Whether `name` is handed on in memory only (its producer does not store it).
    nonisolated func isStreamed(_ name: String) -> Bool { streamed[name] != nil }

    /// The producer `name` began its dataset.
    func started(_ name: String) {
        states[name] = .running
        changed(name)
    }

    /// The producer `name` stored `records`, the last with sequence number `last` (a streamed
    /// dataset's producer passes `nil`: the records follow the ones before).
    func appended(_ name: String, records: [JSONValue], last: Int64?) {
        let last = last ?? (stored[name] ?? 0) + Int64(records.count)
        // A streamed dataset whose reader has ended has no one left to hand records to.
        if !records.isEmpty, streamed[name] == nil || readers[name]?.isEmpty == false {
            var buffer = buffers[name, default: []]
            buffer.append(Batch(first: last - Int64(records.count) + 1, records: records))
            if streamed[name] == nil {
                var held = buffer.reduce(0) { $0 + $1.records.count }
                while held > Self.bufferedRecords, buffer.count > 1 {
                    held -= buffer.removeFirst().records.count
                }
            }
            buffers[name] = buffer
        }
        stored[name] = last
        changed(name)
    }

    /// Returns once every stage reading `name` is within ``maximumLead`` records of its end (or
    /// the run is stopping). Only stages currently reading `name` count, so no stage waits on one
    /// that is busy with another input.
    func throttle(_ name: String) async {
        while !Task.isCancelled, let slowest = readers[name]?.values.min(), (stored[name] ?? 0) - slowest > Self.maximumLead {
            await withCheckedContinuation { throttled[name, default: []].append($0) }
        }
    }

    /// `reader` has read `name` up to `seq`; returns the records after it when still in memory
    /// (for a streamed dataset always: `[]` once the reader has caught up). Throws if a streamed
    /// dataset's records are not (a defect: they are never stored).
    func records(of name: String, after seq: Int64, limit: Int, reader: String) throws -> [JSONValue]? {
        readers[name, default: [:]][reader] = seq
        release(name)
        guard streamed[name] != nil else {
            let found = records(of: name, after: seq, limit: limit)
            if let found, soleReaders[name] == reader { dropBatches(of: name, through: seq + Int64(found.count)) }
            return found
        }
        // The reader is past these batches and never asks for them again.
        dropBatches(of: name, through: seq)
        if let found = records(of: name, after: seq, limit: limit) { return found }
        guard seq >= stored[name] ?? 0 else {
            throw StageFailure(.failed, "records \(seq + 1)… of \"\(name)\" left memory before \"\(reader)\" read them")
        }
        return []
    }

    /// `reader` stopped reading `name` (it reached the end, or the stage ended).
    func finishedReading(_ name: String, reader: String) {
        readers[name]?[reader] = nil
        release(name)
        dropBufferIfUnread(name)
    }

    /// The stage `reader` ended: it no longer holds any producer back.
    func readerEnded(_ reader: String) {
        for name in Array(readers.keys) where readers[name]?[reader] != nil { finishedReading(name, reader: reader) }
    }

    /// Drops the batches of `name` whose records are all at or before `seq`.
    private func dropBatches(of name: String, through seq: Int64) {
        while let first = buffers[name]?.first, first.first + Int64(first.records.count) - 1 <= seq {
            buffers[name]?.removeFirst()
        }
    }

    /// Once its producer has ended and no stage is reading it, a dataset's batches leave memory.
    private func dropBufferIfUnread(_ name: String) {
        if states[name] != .running && readers[name]?.isEmpty ?? true { buffers[name] = nil }
    }

    private func release(_ name: String) {
        for waiter in throttled.removeValue(forKey: name) ?? [] { waiter.resume() }
    }

    private func records(of name: String, after seq: Int64, limit: Int) -> [JSONValue]? {
        guard let buffer = buffers[name], let start = buffer.firstIndex(where: { $0.first <= seq + 1 && seq + 1 < $0.first + Int64($0.records.count) })
        else { return nil }
        var records: [JSONValue] = []
        var next = seq + 1
        for batch in buffer[start...] where records.count < limit {
            guard batch.first <= next else { break }
            let offset = Int(next - batch.first)
            let taken = batch.records[offset..<min(batch.records.count, offset + limit - records.count)]
            records.append(contentsOf: taken)
            next += Int64(taken.count)
        }
        return records
    }

    /// The producer `name` ended; `failed` when its dataset is incomplete.
    func ended(_ name: String, failed: Bool) {
        states[name] = failed ? .failed : .finished
        dropBufferIfUnread(name)
        changed(name)
    }

    /// Returns once the producer `name` has begun its dataset (or ended), or the caller is cancelled.
    func waitUntilStarted(_ name: String) async {
        while states[name] == nil && !Task.isCancelled {
            await withCheckedContinuation { waiters[name, default: []].append($0) }
        }
    }

    func version(of name: String) -> Int { versions[name] ?? 0 }

    func waitForMore(in name: String, after version: Int) async throws -> Bool {
        while true {
            if versions[name] ?? 0 != version { return true }
            switch states[name] {
            case nil, .finished?: return false
            case .failed?: throw StageFailure(.failed, "its input stage \"\(name)\" failed before it finished")
            case .running?: break
            }
            try Task.checkCancellation()
            await withCheckedContinuation { waiters[name, default: []].append($0) }
            try Task.checkCancellation()
            if versions[name] ?? 0 != version { return true }
        }
    }

    /// Wakes every stage waiting on `name` (also used when the run is stopping).
    func changed(_ name: String) {
        versions[name, default: 0] += 1
        for waiter in waiters.removeValue(forKey: name) ?? [] { waiter.resume() }
    }

    /// Wakes everyone, so cancelled readers see their cancellation.
    func wakeAll() {
        for name in Array(waiters.keys) { changed(name) }
        for name in Array(throttled.keys) { release(name) }
    }

    /// The feed as one stage reads it: its reads count toward throttling their producers.
    struct Reader: DatasetFeed {
        let feed: StageFeed
        let stage: String

        func version(of name: String) async -> Int { await feed.version(of: name) }

        func records(of name: String, after seq: Int64, limit: Int) async throws -> [JSONValue]? {
            try await feed.records(of: name, after: seq, limit: limit, reader: stage)
        }

        func finishedReading(_ name: String) async { await feed.finishedReading(name, reader: stage) }

        func waitForMore(in name: String, after version: Int) async throws -> Bool {
            try await feed.waitForMore(in: name, after: version)
        }
    }
}
