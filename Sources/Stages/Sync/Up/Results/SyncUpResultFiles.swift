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

    /// Adds a page's rows, one write per file. Each row is spooled as its CSV line under the
    /// columns known so far (a later row can only add columns at the end), framed by its length
    /// and field count, so the final CSV pads it without parsing it again.
    func add(_ rows: [Row]) throws {
        var pending: [String: [UInt8]] = [:]
        var line: [UInt8] = []
        // Rows come in runs of one object and kind: the file's name is made once a run.
        var current: (object: String, kind: Kind, name: String)?
        for row in rows {
            let name: String
            if let current, current.kind == row.kind, current.object == row.object {
                name = current.name
            } else {
                name = "\(row.object)-\(row.kind.rawValue)"
                current = (row.object, row.kind, name)
                try openSpool(name)
            }
            // Fields in the order of the columns known (the usual case) add none.
            let inOrder = row.fields.count <= spools[name]!.columns.count
                && zip(row.fields.keys, spools[name]!.columns).allSatisfy { $0 == $1 }
            if !inOrder {
                for key in row.fields.keys where spools[name]!.known.insert(key).inserted { spools[name]!.columns.append(key) }
            }
            let columns = spools[name]!.columns
            line.removeAll(keepingCapacity: true)
            for (index, fixed) in [stageId, row.operation, String(row.entryId), row.localId ?? "", row.id ?? "", row.errorCode ?? "",
                                   row.errorMessage ?? ""].enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                CSVLine.appendField(fixed, to: &line)
            }
            if inOrder {
                for (_, value) in row.fields {
                    line.append(UInt8(ascii: ","))
                    CSVLine.appendField(Self.cell(value), to: &line)
                }
                line.append(contentsOf: repeatElement(UInt8(ascii: ","), count: columns.count - row.fields.count))
            } else {
                for column in columns {
                    line.append(UInt8(ascii: ","))
                    if let value = row.fields[column] { CSVLine.appendField(Self.cell(value), to: &line) }
                }
            }
            Self.appendFrame(line, fields: 7 + columns.count, to: &pending[name, default: []])
        }
        for (name, bytes) in pending { spools[name]!.handle.write(Data(bytes)) }
    }

    /// A field's cell: a string as it is, null empty, anything else as JSON.
    private static func cell(_ value: JSONValue) -> String {
        value.stringValue ?? (value.isNull ? "" : value.jsonString)
    }

    /// Creates the spool of `name` unless it exists.
    private func openSpool(_ name: String) throws {
        guard spools[name] == nil else { return }
        try PrivateFiles.createDirectory(directory)
        let path = (directory as NSString).appendingPathComponent(".\(name).\(stageId).spool")
        guard PrivateFiles.createFile(path), let handle = FileHandle(forWritingAtPath: path) else {
            throw StageFailure(.failed, "\(path): cannot write sync-up results")
        }
        spools[name] = Spool(handle: handle, path: path)
    }

    /// A spooled line: its byte length and field count (4 bytes each, little-endian), then the line.
    private static func appendFrame(_ line: [UInt8], fields: Int, to bytes: inout [UInt8]) {
        for value in [UInt32(line.count), UInt32(fields)] { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        bytes.append(contentsOf: line)
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
            // Under the spool's own columns a line only needs padding; under another stage's header it is laid out again.
            let positions = columns == spool.columns ? nil : Dictionary(spool.columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            guard let input = FileHandle(forReadingAtPath: spool.path) else { throw StageFailure(.failed, "\(spool.path): cannot read") }
            var chunk: [UInt8] = []
            var pending: [UInt8] = []
            var start = 0
            while true {
                let data = input.readData(ofLength: 1 << 16)
                pending.removeFirst(start)
                start = 0
                pending.append(contentsOf: data)
                while pending.count - start >= 8 {
                    let length = Self.uint32(pending, at: start)
                    let fields = Self.uint32(pending, at: start + 4)
                    guard pending.count - start - 8 >= length else { break }
                    let line = pending[start + 8..<start + 8 + length]
                    start += 8 + length
                    if let positions {
                        chunk += relaidOut(line, columns: columns, positions: positions)
                    } else {
                        chunk += line
                        chunk += repeatElement(UInt8(ascii: ","), count: max(0, 7 + columns.count - fields))
                    }
                    chunk += [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
                }
                if chunk.count > 1 << 16 {
                    output.write(Data(chunk))
                    chunk.removeAll(keepingCapacity: true)
                }
                if data.isEmpty {
                    guard start == pending.count else { throw StageFailure(.failed, "\(spool.path): the spooled results end part-way through a row") }
                    break
                }
            }
            try input.close()
            output.write(Data(chunk))
            try output.close()
            try? FileManager.default.removeItem(atPath: spool.path)
        }
        spools.removeAll()
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> Int {
        (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
    }

    /// A spooled line under another header: its fixed fields, then each of `columns` from where
    /// the spool had it (empty when the line predates it).
    private func relaidOut(_ line: ArraySlice<UInt8>, columns: [String], positions: [String: Int]) -> [UInt8] {
        var reader = CSVReader(bytes: Array(line)).makeIterator()
        // A line it wrote itself always reads back; should one not, it goes as it was.
        guard case .fields(let cells, _)? = reader.next(), cells.count >= 7 else { return Array(line) }
        let values = columns.map { column -> String in
            guard let position = positions[column], 7 + position < cells.count else { return "" }
            return cells[7 + position]
        }
        return Array(CSVLine.encode(Array(cells[0..<7]) + values).utf8)
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
}
