import ArgumentParser
import Foundation
import JSON
import Soups
import Stages

/// `pipeline discard`: gives up local changes that should not reach the org — a change the org
/// refuses every night (a DELETE_FAILED, a value it rejects), or an edit made by mistake.
struct DiscardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discard",
        abstract: "Discard local changes: entries go back to the values the org last confirmed, or are removed if never synced.",
        discussion: """
            Choose entries with --failed (every entry whose last sync up failed), --entry (by _soupEntryId) or both.
            A locally deleted entry is restored; an entry created locally and never synced is removed; an entry whose
            last write's outcome is still uncertain is left alone (run the sync up again first). The discard is recorded
            with the store's runs (`pipeline runs`). Takes the store's lock: exit 4 while a run holds it.
            """)

    @Argument(help: "The store's SQLite file.")
    var store: String

    @Argument(help: "The soup whose entries to discard changes of.")
    var soup: String

    @Option(name: .customLong("entry"), help: "An entry's _soupEntryId (repeatable).")
    var entries: [Int64] = []

    @Flag(help: "Every entry whose last sync up failed (dirty, with __last_error__).")
    var failed = false

    func run() async throws {
        do {
            guard failed || !entries.isEmpty else { throw CLIError(exitCode: 2, message: "choose entries: --failed, --entry ID, or both") }
            guard FileManager.default.fileExists(atPath: store) else { throw CLIError(exitCode: 2, message: "\(store): no such store") }
            let lock: StoreLock
            do {
                lock = try StoreLock(storePath: store)
            } catch {
                throw CLIError(exitCode: 4, message: "\(store): another run holds this store")
            }
            defer { lock.release() }
            let soupStore = try SoupStore(path: store)
            defer { try? soupStore.close() }
            guard try await soupStore.hasSoup(named: soup) else {
                let names = try await soupStore.soupSpecs().map(\.name)
                throw CLIError(exitCode: 2, message: "\(store): no soup named \"\(soup)\"; known soups: \(names.joined(separator: ", "))")
            }
            let started = Date()
            var ids = entries
            if failed {
                var afterId: Int64 = 0
                while true {
                    let page = try await soupStore.dirtyEntries(in: soup, afterId: afterId, limit: 1000)
                    guard let last = page.last?.soupEntryId else { break }
                    afterId = last
                    ids += page.filter { !($0[SyncField.lastError].map { $0.isNull || $0 == .string("") } ?? true) }.compactMap(\.soupEntryId)
                }
            }
            ids = Array(Set(ids)).sorted()
            let outcomes = try await soupStore.discardLocalChanges(ids: ids, in: soup)
            var counts: [String: Int] = [:]
            for id in ids {
                let outcome = outcomes[id] ?? .missing
                counts[outcome.rawValue, default: 0] += 1
                Console.output("\(soup) \(id): \(outcome.rawValue)")
            }
            let runId = Timestamp.runId(started)
            var countsObject = JSONObject()
            for (key, value) in counts.sorted(by: { $0.key < $1.key }) { countsObject[key] = .integer(Int64(value)) }
            let record: JSONValue = [
                "pipeline": "(discard)", "runId": .string(runId), "status": "succeeded", "exitCode": 0,
                "stages": [["id": "discard", "type": "discard", "soup": .string(soup), "status": "succeeded",
                            "counts": .object(countsObject),
                            "entries": .array(ids.map { ["_soupEntryId": .integer($0), "outcome": .string((outcomes[$0] ?? .missing).rawValue)] })]],
            ]
            try await soupStore.runs.save(StoredRun(id: runId, pipeline: "(discard)", status: "succeeded", exitCode: 0,
                                                  startedAt: Timestamp.iso8601(started), finishedAt: Timestamp.iso8601(Date()),
                                                  reportDir: nil, record: record))
            let summary = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            Console.error("\(soup): \(ids.isEmpty ? "nothing to discard" : summary)")
        } catch let error as CLIError {
            throw error.exit()
        }
    }
}
