import ArgumentParser
import Foundation
import JSON
import Soups

/// Opens a store for reading — no lock: it never blocks or waits for a running pipeline — runs
/// `body` with it and closes it; a missing store or a `CLIError` becomes the exit code.
private func readingStore(_ path: String, _ body: (SoupStore) async throws -> Void) async throws {
    do {
        let store: SoupStore
        do {
            store = try SoupStore.openForReading(path: path)
        } catch {
            throw CLIError(exitCode: 2, message: "\(error)")
        }
        defer { try? store.close() }
        try await body(store)
    } catch let error as CLIError {
        throw error.exit()
    }
}

struct SoupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soups",
        abstract: "List a store's soups with their entry counts, print one soup's entries, or run a Smart SQL query.",
        discussion: """
            With --json, one JSON object per line: a soup summary, or an entry as stored (with _soupEntryId and _soupLastModifiedDate).
            --query runs SmartStore's Smart SQL, read-only: {Soup:path} is an indexed field (or any path, through json_extract),
            {Soup:_soup} the whole entry, {Soup} the soup's table; one JSON array per row.
            Example: pipeline soups .pipeline/crm.sqlite --query "SELECT {Accounts:Name}, COUNT(*) FROM {Accounts}, {Contacts} WHERE {Contacts:AccountId} = {Accounts:Id} GROUP BY {Accounts:Name}"
            """)

    @Argument(help: "The store's SQLite file.")
    var store: String

    @Argument(help: "A soup to print the entries of.")
    var soup: String?

    @Flag(help: "Only dirty entries (__local__ true).")
    var dirty = false

    @Flag(help: "Only entries whose last sync up failed (dirty, with __last_error__).")
    var failed = false

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: "A Smart SQL query to run (read-only); prints one JSON array per row.")
    var query: String?

    func run() async throws {
        try await readingStore(store) { soupStore in
            if let query {
                guard soup == nil else { throw CLIError(exitCode: 2, message: "--query names its soups itself ({Soup:path}); give no SOUP argument") }
                return try await smartQuery(query, soupStore)
            }
            guard let soup else { return try await listSoups(soupStore) }
            guard try await soupStore.hasSoup(named: soup) else {
                let names = try await soupStore.soupSpecs().map(\.name)
                throw CLIError(exitCode: 2, message: "\(store): no soup named \"\(soup)\"; known soups: \(names.joined(separator: ", "))")
            }
            var afterId: Int64 = 0
            while true {
                let page = dirty || failed
                    ? try await soupStore.dirtyEntries(in: soup, afterId: afterId, limit: 1000)
                    : try await soupStore.entries(in: soup, afterId: afterId, limit: 1000)
                guard let last = page.last?.soupEntryId else { break }
                afterId = last
                for entry in page {
                    if failed, entry[SyncField.lastError].map({ $0.isNull || $0 == .string("") }) ?? true { continue }
                    Console.output(JSONValue.object(entry).jsonString)
                }
            }
        }
    }

    private func smartQuery(_ sql: String, _ soupStore: SoupStore) async throws {
        var page = 0
        while true {
            let rows: [[JSONValue]]
            do {
                rows = try await soupStore.smartQuery(sql, pageSize: 1000, page: page)
            } catch {
                throw CLIError(exitCode: 2, message: "--query: \(error)")
            }
            for row in rows { Console.output(JSONValue.array(row).jsonString) }
            guard rows.count == 1000 else { return }
            page += 1
        }
    }

    private func listSoups(_ soupStore: SoupStore) async throws {
        let specs = try await soupStore.soupSpecs()
        var rows: [[String]] = []
        for spec in specs {
            let counts = try await soupStore.counts(of: spec.name)
            if json {
                let line: JSONValue = [
                    "soupName": .string(spec.name), "entries": .integer(Int64(counts.total)), "dirty": .integer(Int64(counts.dirty)),
                    "failed": .integer(Int64(counts.failed)),
                    "indexes": .array(spec.indexes.map { ["path": .string($0.path), "type": .string($0.type.rawValue)] }),
                ]
                Console.output(line.jsonString)
            } else {
                rows.append([spec.name, String(counts.total), String(counts.dirty), String(counts.failed), String(spec.indexes.count)])
            }
        }
        if !json { Console.output(TextTable.render(header: ["soup", "entries", "dirty", "failed", "indexes"], rows: rows)) }
    }
}

struct SyncsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "syncs",
        abstract: "List a store's named syncs and their states.",
        discussion: """
            With --json, one Mobile SDK SyncState object per line (times in epoch milliseconds, -1 when unset). \
            A sync recorded as RUNNING while no run holds the store belongs to a process that died: it shows as STOPPED \
            (and the next run resumes it).
            """)

    @Argument(help: "The store's SQLite file.")
    var store: String

    @Flag(help: "One JSON object per line.")
    var json = false

    func run() async throws {
        try await readingStore(store) { soupStore in
            // No run holds the store: a RUNNING sync was left by a process that died.
            let runActive = (try? StoreLock(storePath: store)).map { lock in lock.release(); return false } ?? true
            let syncs = try await soupStore.syncs.all().map { sync in
                var shown = sync
                if !runActive && sync.status == .running { shown.status = .stopped }
                return shown
            }
            if json {
                for sync in syncs { Console.output(sync.json.jsonString) }
                return
            }
            let rows = syncs.map { sync in
                [String(sync.id), sync.name, sync.type.rawValue, sync.soupName, sync.status.rawValue, "\(sync.progress)%",
                 String(sync.totalSize), sync.maxTimeStamp < 0 ? "-" : String(sync.maxTimeStamp), sync.error]
            }
            Console.output(TextTable.render(header: ["id", "name", "type", "soup", "status", "progress", "totalSize", "maxTimeStamp", "error"], rows: rows))
        }
    }
}

struct RunsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List past runs recorded in a store: id, status, counts and report directory.")

    @Argument(help: "The store's SQLite file.")
    var store: String

    @Flag(help: "One run record (report.json content) per line.")
    var json = false

    func run() async throws {
        try await readingStore(store) { soupStore in
            // With no run holding the store, a run still recorded as running died unfinished.
            let runActive = (try? StoreLock(storePath: store)).map { lock in lock.release(); return false } ?? true
            let runs = try await soupStore.runs.all().map { run in
                guard !runActive, run.status == "running" else { return run }
                var dead = run
                dead.status = "killed"
                if case .object(var record) = dead.record { record["status"] = "killed"; dead.record = .object(record) }
                return dead
            }
            if json {
                for run in runs { Console.output(run.record.jsonString) }
                return
            }
            let rows = runs.map { run -> [String] in
                // Per stage: a count means something only with its stage (24 read by a sync
                // down are not 24 written).
                let counts = (run.record["stages"]?.arrayValue ?? []).compactMap { stage -> String? in
                    let nonzero = (stage["counts"]?.objectValue ?? JSONObject()).filter { ($0.value.integerValue ?? 0) != 0 }
                        .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.integerValue ?? 0)" }
                    return nonzero.isEmpty ? nil : "\(stage["id"]?.stringValue ?? "?"): " + nonzero.joined(separator: " ")
                }.joined(separator: "; ")
                return [run.id, run.pipeline, run.status, run.exitCode.map(String.init) ?? "-", counts.isEmpty ? "-" : counts, run.reportDir ?? "-"]
            }
            Console.output(TextTable.render(header: ["run", "pipeline", "status", "exit", "counts", "report"], rows: rows))
        }
    }
}

/// Aligned plain-text columns.
enum TextTable {
    static func render(header: [String], rows: [[String]]) -> String {
        let widths = header.indices.map { index in ([header[index]] + rows.map { $0[index] }).map(\.count).max()! }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        return ([line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line)).joined(separator: "\n")
    }
}
