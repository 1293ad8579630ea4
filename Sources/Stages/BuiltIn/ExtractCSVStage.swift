import Connectors
import Foundation
import Formats
import JSON

/// `extract.csv`: streams an RFC 4180 CSV file (header row) into the stage's dataset. `columns`
/// renames headers, `types` coerces values, `constants` adds fields, `emptyAs` decides whether an
/// empty cell is absent (default: the soup keeps its value) or `null`. A row that cannot be read —
/// wrong column count, a value that does not convert, invalid encoding — goes to
/// `rejects/<stage id>.csv` (`line,reason,raw`) and the rest of the file loads. Each record carries
/// the physical line it starts on as `attributes.line`, so a later stage's rejects can name it.
public struct ExtractCSVStage: Stage {
    public static let typeName = "extract.csv"
    public static let countKeys = [StageCounts.read, StageCounts.rejected]

    public let file: String
    public let sobjectType: String?
    let delimiter: Character
    let encoding: CSVReader.Encoding
    let columns: [String: String]
    let coercions: [String: ValueCoercion]
    let constants: JSONObject
    let emptyIsNull: Bool

    public init(settings: StageSettings) throws {
        file = settings.inputFile("file") ?? ""
        sobjectType = settings.string("sobjectType")
        let delimiterText = settings.string("delimiter") ?? ","
        if delimiterText.count != 1 || !(delimiterText.first?.isASCII ?? false) {
            settings.report("delimiter", "must be a single ASCII character, such as \",\" or \";\"")
        }
        delimiter = delimiterText.first ?? ","
        let encodingName = settings.choice("encoding", of: CSVReader.Encoding.allCases.map(\.rawValue), default: "utf-8")
        encoding = CSVReader.Encoding(rawValue: encodingName) ?? .utf8
        let zoneName = settings.string("timeZone") ?? "UTC"
        let zone = TimeZone(identifier: zoneName)
        if zone == nil { settings.report("timeZone", "unknown time zone \"\(zoneName)\"; use an IANA name such as Europe/Paris") }
        var renames: [String: String] = [:]
        for (name, value) in settings.object("columns") ?? JSONObject() {
            if let target = value.stringValue { renames[name] = target } else { settings.report("columns.\(name)", "must be a field name string") }
        }
        columns = renames
        var coercions: [String: ValueCoercion] = [:]
        for (field, value) in settings.object("types") ?? JSONObject() {
            let kindName = value.stringValue ?? value["type"]?.stringValue ?? ""
            guard let kind = ValueCoercion.Kind(rawValue: kindName) else {
                settings.report("types.\(field)", "must be one of \(ValueCoercion.Kind.allCases.map(\.rawValue).joined(separator: ", ")), or {\"type\": …, \"format\": …}")
                continue
            }
            coercions[field] = ValueCoercion(kind: kind, format: value["format"]?.stringValue, timeZone: zone ?? TimeZone(identifier: "UTC")!)
        }
        self.coercions = coercions
        constants = settings.object("constants") ?? JSONObject()
        emptyIsNull = settings.choice("emptyAs", of: ["absent", "null"], default: "absent") == "null"
    }

    public func run(in context: StageContext) async throws -> StageResult {
        let reader: CSVReader
        do {
            reader = try CSVReader(path: file, delimiter: delimiter, encoding: encoding)
        } catch {
            throw StageFailure(.invalidInput, "\(file): \(error.description)")
        }
        var rows = reader.makeIterator()
        guard let headerRow = rows.next() else { throw StageFailure(.invalidInput, "\(file): the file is empty; a header row is required") }
        guard case .fields(let header, _) = headerRow else {
            if case .malformed(let reason, let line, _) = headerRow { throw StageFailure(.invalidInput, "\(file): line \(line): \(reason)") }
            return StageResult()
        }
        let names = header.map { columns[$0] ?? $0 }
        var seen: [String: Int] = [:]
        for (offset, name) in names.enumerated() {
            if let earlier = seen[name.lowercased()] {
                throw StageFailure(.invalidInput, "\(file): line 1: column \(offset + 1) repeats the header \"\(name)\" of column \(earlier + 1) (field names ignore case); each column needs its own name (rename one with \"columns\")")
            }
            if !name.isEmpty { seen[name.lowercased()] = offset }
        }
        for (field, _) in coercions where !names.contains(field) {
            throw StageFailure(.invalidInput, "\(file): types names \"\(field)\", which is not a column (columns: \(names.joined(separator: ", ")))")
        }
        var result = StageResult()
        var rejects = RejectsWriter(directory: context.reportDirectory, stageId: context.stageId)
        var batch: [JSONValue] = []
        let object = sobjectType ?? "records"
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value
        var meter = context.progress.meter(unit: "bytes", total: size)
        while let row = rows.next() {
            switch row {
            case .malformed(let reason, let line, let raw):
                try rejects.add(line: line, reason: reason, raw: raw)
                result.add(StageCounts.rejected, object: object)
            case .fields(let values, let line):
                if values.count == 1 && values[0].isEmpty { continue }
                switch record(values, names: names, line: line) {
                case .success(let record):
                    batch.append(.object(record))
                    result.add(StageCounts.read, object: object)
                case .failure(let failure):
                    try rejects.add(line: line, reason: failure.message,
                                    raw: CSVLine.encode(values, delimiter: delimiter))
                    result.add(StageCounts.rejected, object: object)
                }
            }
            if batch.count >= 5000 {
                try await context.emit(batch)
                batch.removeAll(keepingCapacity: true)
                meter.advance(to: Int64(rows.bytesRead))
                if context.shouldStop { break }
            }
        }
        if let problem = rows.readError {
            throw StageFailure(.invalidInput, "\(file): \(problem)", partialResult: result)
        }
        try await context.emit(batch)
        try rejects.close()
        return result
    }

    /// The record for one row's values, or why the row is rejected.
    func record(_ values: [String], names: [String], line: Int) -> Result<JSONObject, CoercionFailure> {
        guard values.count == names.count else {
            return .failure(CoercionFailure("expected \(names.count) columns, found \(values.count)"))
        }
        var record = JSONObject()
        record.reserveCapacity(names.count + constants.count + 1)
        record["attributes"] = sobjectType.map { ["type": .string($0), "line": .integer(Int64(line))] } ?? ["line": .integer(Int64(line))]
        for (name, value) in zip(names, values) {
            if value.isEmpty {
                if emptyIsNull { record[name] = .null }
                continue
            }
            if let coercion = coercions[name] {
                switch coercion.convert(value) {
                case .success(let converted): record[name] = converted
                case .failure(let failure): return .failure(CoercionFailure("column \(name): \(failure.message)"))
                }
            } else {
                record[name] = .string(value)
            }
        }
        for (name, value) in constants { record[name] = value }
        return .success(record)
    }
}
