import Foundation
import Formats

/// What a report shows beyond the counts, read back from the files the run's stages wrote in the
/// report directory: every file (for links), the first failed records of each `<Object>-error.csv`
/// and the first rejected rows of each `rejects/<stage>.csv`, with their totals. Only the first
/// ``limit`` rows of each file are kept, so a report of a million failures stays small.
struct ReportDetails: Sendable {
    /// A record the org refused (a line of an error CSV).
    struct Failure: Sendable {
        var object: String
        var stage: String
        var operation: String
        var localId: String
        var errorCode: String
        var message: String
    }

    /// A row a stage rejected before it reached a soup (a line of a rejects CSV).
    struct Reject: Sendable {
        var stage: String
        var line: String
        var reason: String
    }

    /// Files of the directory, relative to it, sorted (`Account-error.csv`, `rejects/csv.csv`, …).
    var files: [String] = []
    var failures: [Failure] = []
    /// Failed records per error file, all of them (not only those kept).
    var failureTotals: [String: Int] = [:]
    var rejects: [Reject] = []
    var rejectTotals: [String: Int] = [:]

    /// Rows kept per file.
    static let limit = 50

    init() {}

    /// Reads `directory`; files that cannot be read are listed and skipped.
    init(directory: String) {
        let manager = FileManager.default
        guard let names = manager.subpaths(atPath: directory) else { return }
        files = names.filter { name in
            var isDirectory: ObjCBool = false
            let base = (name as NSString).lastPathComponent
            return !base.hasPrefix(".") && manager.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
        for file in files {
            let path = (directory as NSString).appendingPathComponent(file)
            if file.hasSuffix("-error.csv") && !file.contains("/") {
                let object = String(file.dropLast("-error.csv".count))
                var kept = 0
                failureTotals[file] = Self.read(path) { columns, row in
                    guard kept < Self.limit else { return }
                    kept += 1
                    failures.append(Failure(object: object, stage: row["stage", columns], operation: row["operation", columns],
                                            localId: row["localId", columns].isEmpty ? row["_soupEntryId", columns] : row["localId", columns],
                                            errorCode: row["errorCode", columns], message: row["errorMessage", columns]))
                }
            } else if file.hasPrefix("rejects/") && file.hasSuffix(".csv") {
                let stage = String((file as NSString).lastPathComponent.dropLast(4))
                var kept = 0
                rejectTotals[file] = Self.read(path) { columns, row in
                    guard kept < Self.limit else { return }
                    kept += 1
                    rejects.append(Reject(stage: stage, line: row["line", columns], reason: row["reason", columns]))
                }
            }
        }
    }

    /// Calls `each` with the header and every data row of a CSV (a header line repeated by an
    /// appending stage starts a new section); returns the number of data rows.
    private static func read(_ path: String, _ each: ([String: Int], [String]) -> Void) -> Int {
        guard let reader = try? CSVReader(path: path) else { return 0 }
        var columns: [String: Int]?
        var count = 0
        for row in reader {
            guard case .fields(let fields, _) = row else { continue }
            let isHeader = fields.first == "stage" && fields.contains("errorCode") || fields == ["line", "reason", "raw"]
            if columns == nil || isHeader {
                columns = Dictionary(fields.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
                continue
            }
            count += 1
            each(columns ?? [:], fields)
        }
        return count
    }
}

private extension Array where Element == String {
    /// The value of a named column, or "" when the row has no such column.
    subscript(name: String, columns: [String: Int]) -> String {
        guard let index = columns[name], index < count else { return "" }
        return self[index]
    }
}
