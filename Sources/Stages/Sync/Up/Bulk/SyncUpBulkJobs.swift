import Connectors
import Formats
import JSON
import Synchronization

/// The Bulk API 2.0 ingest jobs of a sync up whose jobs span pages. A page's writes are grouped
/// by object, operation and columns; each group's rows are journaled with their job's id (the job
/// is created first: an `Open` job does nothing), then appended to the job's upload. A job is
/// uploaded and closed once its upload would pass `maxUploadBytes` or hold `maxRecords` rows, or
/// when the pages end; it then runs at the org while the next pages fill the next job. Once a job
/// is closed only a hash of each row is kept, to match its results to the rows.
struct SyncUpBulkJobs {
    /// Where a record's write went: its job, its row in the job's upload, and its journal entry.
    struct Ticket: Sendable {
        var job: Int32
        var row: Int32
        var journalId: Int64
    }

    /// About 100 MB of CSV: an org takes up to 150 MB base64 in one upload.
    static let defaultMaxUploadBytes = 100_000_000

    private struct Key: Hashable {
        var object: String
        var kind: SyncUpOperation.Kind
        var externalIdField: String?
    }

    private struct Job {
        var id: String
        var key: Key
        var columns: [String]
        var upload: [UInt8]
        var hashes: [UInt64] = []
        /// Upload, close and results, started when the job is full (or the pages end).
        var run: Task<BulkIngestResult, any Error>?
    }

    let client: any OrgClient
    let sender: SyncUpSender
    let maxUploadBytes: Int
    let maxRecords: Int
    /// The first job closes early (at about half the writes), so the org runs it while the
    /// client writes the second, and the client saves its pages while the org runs the second.
    let firstJobRecords: Int
    private var jobs: [Job] = []
    /// The job still taking rows, per object and operation.
    private var open: [Key: Int] = [:]

    init(client: any OrgClient, sender: SyncUpSender, maxUploadBytes: Int = defaultMaxUploadBytes, maxRecords: Int = .max,
         firstJobRecords: Int = .max) {
        self.client = client
        self.sender = sender
        self.maxUploadBytes = maxUploadBytes
        self.maxRecords = maxRecords
        self.firstJobRecords = firstJobRecords
    }

    /// The number of jobs created so far.
    var count: Int { jobs.count }

    /// Journals `operations` (the writes of one page, any objects and operations) with their
    /// jobs' ids and appends their rows to the jobs' uploads; returns each write's ticket.
    mutating func add(_ operations: [SyncUpOperation], checkBudget: @Sendable () async throws -> Void) async throws -> [(SyncUpOperation, Ticket)] {
        var tickets: [(SyncUpOperation, Ticket)] = []
        tickets.reserveCapacity(operations.count)
        let requests = SyncUpPacker(transport: .bulk).bulkPhases(operations).joined()
        for case .bulk(let object, let kind, let field, let group) in requests {
            let key = Key(object: object, kind: kind, externalIdField: field)
            let records = group.map { ($0.fields, $0.recordId, $0.externalIdValue) }
            var table = SyncUpBulkTable(kind: kind, externalIdField: field, records: records)
            // Rows with a column the open job lacks go to a new job; the others take its columns
            // (a resumed run reads a job's columns from its result files).
            if let index = open[key], !Set(jobs[index].columns).isSuperset(of: table.columns) { close(index) }
            if let index = open[key], jobs[index].columns != table.columns {
                table = SyncUpBulkTable(kind: kind, externalIdField: field, columns: jobs[index].columns, records: records)
            }
            // Every row's CSV line in one buffer (`ends[i]`: where line i ends), not an array each.
            var encoded: [UInt8] = []
            encoded.reserveCapacity(table.rows.count * 64)
            var ends: [Int] = []
            ends.reserveCapacity(table.rows.count)
            for row in table.rows {
                CSVLine.append(row.lazy.map { $0 ?? "" }, to: &encoded)
                encoded.append(UInt8(ascii: "\n"))
                ends.append(encoded.count)
            }
            func line(_ index: Int) -> ArraySlice<UInt8> { encoded[(index == 0 ? 0 : ends[index - 1])..<ends[index]] }
            var start = 0
            while start < group.count {
                let index = try await openJob(key, columns: table.columns, checkBudget: checkBudget)
                // The rows that fit (at least one, so a row larger than the limit still goes).
                var end = start
                var bytes = jobs[index].upload.count
                let limit = index == 0 ? min(maxRecords, firstJobRecords) : maxRecords
                while end < group.count, end == start && jobs[index].hashes.isEmpty
                        || (bytes + line(end).count <= maxUploadBytes && jobs[index].hashes.count + end - start < limit) {
                    bytes += line(end).count
                    end += 1
                }
                if end == start {
                    close(index)
                    continue
                }
                let segment = start == 0 && end == group.count ? group : Array(group[start..<end])
                let (journalIds, _) = try await sender.journal(segment, bulkJobId: jobs[index].id)
                for (offset, operation) in segment.enumerated() {
                    let row = jobs[index].hashes.count
                    jobs[index].upload += line(start + offset)
                    jobs[index].hashes.append(BulkRowHash.of(table.rows[start + offset]))
                    tickets.append((operation, Ticket(job: Int32(index), row: Int32(row), journalId: journalIds[operation.key] ?? 0)))
                }
                start = end
            }
        }
        return tickets
    }

    /// Closes every job still taking rows: after this, each job runs at the org.
    mutating func closeAll() {
        for index in open.values.sorted() { close(index) }
    }

    /// A closed job's results, each row in the order of the job's upload; waits for the job.
    /// Throws when the job could not be uploaded, closed or read.
    func result(of job: Int32) async throws -> BulkIngestResult {
        guard let run = jobs[Int(job)].run else {
            throw OrgClientError.invalidResponse("Bulk job \(jobs[Int(job)].id) was never closed")
        }
        return try await withTaskCancellationHandler { try await run.value } onCancel: { run.cancel() }
    }

    /// Stops waiting for every job (a job already closed still runs at the org).
    func cancelAll() {
        for job in jobs { job.run?.cancel() }
    }

    /// Drops a job's results once every page that wrote to it is saved.
    mutating func release(_ job: Int32) {
        jobs[Int(job)].run = nil
    }

    /// The job id of a job.
    func id(of job: Int32) -> String { jobs[Int(job)].id }

    private mutating func openJob(_ key: Key, columns: [String], checkBudget: @Sendable () async throws -> Void) async throws -> Int {
        if let index = open[key] { return index }
        try await checkBudget()
        let operation = key.kind == .create ? "insert" : key.kind.rawValue
        let id = try await client.createIngestJob(object: key.object, operation: operation,
                                                  externalIdField: key.kind == .upsert ? key.externalIdField : nil)
        jobs.append(Job(id: id, key: key, columns: columns, upload: Array((CSVLine.encode(columns) + "\n").utf8)))
        open[key] = jobs.count - 1
        return jobs.count - 1
    }

    /// Starts a job's upload, close and result reading; it takes no more rows.
    private mutating func close(_ index: Int) {
        open[jobs[index].key] = nil
        let (client, id, hashes) = (client, jobs[index].id, jobs[index].hashes)
        // The upload is let go once sent, not kept while the job runs.
        let upload = Mutex<[UInt8]?>(jobs[index].upload)
        jobs[index].upload = []
        jobs[index].hashes = []
        jobs[index].run = Task {
            try await client.uploadAndCloseIngestJob(id, uploads: [upload.withLock { $0.take() } ?? []])
            return try await client.bulkIngestResult(jobId: id, rowHashes: hashes)
        }
    }
}
