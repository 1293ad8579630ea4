import Connectors
import Foundation
import Formats
import JSON

/// Writes `<Object>-success.csv` and `<Object>-error.csv` (or, in a dry run, `<Object>-plan.csv`)
/// in the report directory: `stage,operation,_soupEntryId,localId,Id,errorCode,errorMessage`
/// (`action` in place of `operation` in a plan) followed by the fields sent. Rows are spooled to a
/// temporary file as they come, so memory does not grow with the records; the CSVs are written
/// once every field name is known. A file another stage of the run wrote first is appended to,
/// under its own header.
actor SyncUpResultFiles {
    enum Kind: String {
        case success, error, plan
    }

    private struct Spool {
        var handle: FileHandle
        var path: String
        var columns: [String] = []
        var known: Set<String> = []
    }

    private let directory: String
    private let stageId: String
    private var spools: [String: Spool] = [:]

    init(directory: String, stageId: String) {
        self.directory = directory
        self.stageId = stageId
    }

    /// One record's line: the operation (or plan action), its ids, its error, and the fields sent.
    struct Row: Sendable {
        var kind: Kind
        var object: String
        var operation: String
        var entryId: Int64
        var localId: String?
        var id: String?
        var errorCode: String?
        var errorMessage: String?
        var fields: JSONObject
        /// The record's soup (not written: it tells rows of the same `_soupEntryId` apart).
        var soup = ""
    }

    /// Adds a page's rows, one write per file.
    func add(_ rows: [Row]) throws {
        var pending: [String: Data] = [:]
        for row in rows {
            let name = "\(row.object)-\(row.kind.rawValue)"
            if spools[name] == nil {
                try PrivateFiles.createDirectory(directory)
                let path = (directory as NSString).appendingPathComponent(".\(name).\(stageId).spool")
                guard PrivateFiles.createFile(path), let handle = FileHandle(forWritingAtPath: path) else {
                    throw StageFailure(.failed, "\(path): cannot write sync-up results")
                }
                spools[name] = Spool(handle: handle, path: path)
            }
            for key in row.fields.keys where spools[name]!.known.insert(key).inserted { spools[name]!.columns.append(key) }
            let line: JSONValue = .array([
                .string(row.operation), .integer(row.entryId), .string(row.localId ?? ""), .string(row.id ?? ""),
                .string(row.errorCode ?? ""), .string(row.errorMessage ?? ""), .object(row.fields),
            ])
            pending[name, default: Data()].append(contentsOf: (line.jsonString + "\n").utf8)
        }
        for (name, data) in pending { spools[name]!.handle.write(data) }
    }

    /// Writes the CSVs and removes the spool files.
    func finish() throws {
        for (name, spool) in spools.sorted(by: { $0.key < $1.key }) {
            try spool.handle.close()
            let path = (directory as NSString).appendingPathComponent("\(name).csv")
            var columns = spool.columns
            let exists = FileManager.default.fileExists(atPath: path)
            if exists, let header = Self.firstLine(of: path) {
                columns = Array((try? CSVReader.rows(of: header))?.first?.dropFirst(7) ?? [])
            }
            guard exists || PrivateFiles.createFile(path), let output = FileHandle(forWritingAtPath: path) else {
                throw StageFailure(.failed, "\(path): cannot write sync-up results")
            }
            output.seekToEndOfFile()
            if !exists {
                let first = name.hasSuffix("-plan") ? "action" : "operation"
                output.write(Data((CSVLine.encode(["stage", first, "_soupEntryId", "localId", "Id", "errorCode", "errorMessage"] + columns) + "\r\n").utf8))
            }
            guard let input = FileHandle(forReadingAtPath: spool.path) else { throw StageFailure(.failed, "\(spool.path): cannot read") }
            var chunk = ""
            var pending: [UInt8] = []
            while true {
                let data = input.readData(ofLength: 1 << 16)
                pending.append(contentsOf: data)
                var start = 0
                while let end = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    chunk += csvLine(pending[start..<end], columns: columns)
                    start = end + 1
                }
                pending.removeFirst(start)
                if chunk.utf8.count > 1 << 16 { output.write(Data(chunk.utf8)); chunk = "" }
                if data.isEmpty { break }
            }
            try input.close()
            output.write(Data(chunk.utf8))
            try output.close()
            try? FileManager.default.removeItem(atPath: spool.path)
        }
        spools.removeAll()
    }

    /// The header line of an existing CSV, read without loading the file.
    private static func firstLine(of path: String) -> String? {
        guard let input = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? input.close() }
        var bytes: [UInt8] = []
        while true {
            let chunk = input.readData(ofLength: 4096)
            if let end = chunk.firstIndex(of: UInt8(ascii: "\n")) {
                bytes.append(contentsOf: chunk[chunk.startIndex..<end])
                break
            }
            if chunk.isEmpty { break }
            bytes.append(contentsOf: chunk)
        }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// One spooled row as a CSV line.
    private func csvLine(_ bytes: ArraySlice<UInt8>, columns: [String]) -> String {
        guard let row = try? JSONParser.parse(Array(bytes)).value.arrayValue, row.count == 7 else { return "" }
        let fixed = row[0..<6].map { $0.stringValue ?? ($0.integerValue.map(String.init) ?? "") }
        let fields = row[6].objectValue ?? JSONObject()
        let values = columns.map { column -> String in
            guard let value = fields[column] else { return "" }
            return value.stringValue ?? (value.isNull ? "" : value.jsonString)
        }
        return CSVLine.encode([stageId] + fixed + values) + "\r\n"
    }
}
