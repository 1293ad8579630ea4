import Connectors
import Dispatch
import Foundation
import Formats
import JSON
import Synchronization

/// `extract.xml`: streams an XML file into the stage's dataset. `record` names the element of one
/// record (its attributes and child elements are fields); `children` turns nested repeated elements
/// into child records held under the relationship name as a query result. The file is checked
/// whole first: malformed or truncated XML stops the stage with the line and column before any
/// record is handed on.
public struct ExtractXMLStage: Stage {
    public static let typeName = "extract.xml"
    public static let countKeys = [StageCounts.read]

    public let file: String
    let record: String
    let sobjectType: String?
    let children: [XMLRecordReader.ChildRule]

    public init(settings: StageSettings) throws {
        file = settings.inputFile("file") ?? ""
        record = settings.string("record", required: true) ?? ""
        sobjectType = settings.string("sobjectType")
        var rules: [XMLRecordReader.ChildRule] = []
        if let value = settings.value("children") {
            for (offset, element) in (value.arrayValue ?? []).enumerated() {
                guard let object = element.objectValue, let name = object["element"]?.stringValue else {
                    settings.report("children[\(offset)]", "must be an object with at least \"element\"")
                    continue
                }
                for key in object.keys where !["element", "within", "sobjectType", "relationship"].contains(key) {
                    settings.report("children[\(offset)].\(key)", "unknown key; expected element, within, sobjectType, relationship")
                }
                rules.append(XMLRecordReader.ChildRule(element: name, within: object["within"]?.stringValue,
                                                       sobjectType: object["sobjectType"]?.stringValue,
                                                       relationship: object["relationship"]?.stringValue))
            }
            if value.arrayValue == nil { settings.report("children", "must be an array of {element, within, sobjectType, relationship}") }
        }
        children = rules
    }

    public func run(in context: StageContext) async throws -> StageResult {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else { throw StageFailure(.invalidInput, "\(file): no such file") }
        guard !isDirectory.boolValue else { throw StageFailure(.invalidInput, "\(file): is a directory, not an XML file") }
        guard FileManager.default.isReadableFile(atPath: file) else { throw StageFailure(.invalidInput, "\(file): cannot be read") }
        let reader = XMLRecordReader(path: file, recordElement: record, sobjectType: sobjectType, children: children)
        // A broken file is refused whole before one record is handed on, so nothing of it is staged.
        do throws(XMLRecordReader.SyntaxError) {
            try reader.validate()
        } catch {
            throw StageFailure(.invalidInput, "\(file): \(error.description)")
        }
        // The SAX parser calls back synchronously: it runs on its own thread and hands batches over,
        // taking one of two slots for each; the reader frees a slot as it takes a batch, so the
        // parser waits (blocked on its own thread, no polling) while two batches are unread.
        let (batches, continuation) = AsyncStream<Result<[JSONValue], XMLRecordReader.SyntaxError>>.makeStream()
        let slots = DispatchSemaphore(value: 2)
        let stop = StopFlag()
        continuation.onTermination = { _ in
            stop.set()
            slots.signal()
        }
        DispatchQueue.global().async {
            func hand(_ item: Result<[JSONValue], XMLRecordReader.SyntaxError>) {
                slots.wait()
                if !stop.isSet { continuation.yield(item) }
            }
            var batch: [JSONValue] = []
            do throws(XMLRecordReader.SyntaxError) {
                try reader.read { record in
                    batch.append(.object(record))
                    if batch.count >= 1000 {
                        hand(.success(batch))
                        batch.removeAll(keepingCapacity: true)
                    }
                    return !stop.isSet
                }
                if !batch.isEmpty { hand(.success(batch)) }
            } catch {
                if !batch.isEmpty { hand(.success(batch)) }
                hand(.failure(error))
            }
            continuation.finish()
        }
        var result = StageResult()
        let object = sobjectType ?? record
        defer {
            stop.set()
            slots.signal()
        }
        var meter = context.progress.meter(unit: "records")
        var read: Int64 = 0
        for await item in batches {
            slots.signal()
            switch item {
            case .success(let batch):
                try await context.emit(batch)
                result.add(StageCounts.read, batch.count, object: object)
                read += Int64(batch.count)
                meter.advance(to: read)
                if context.shouldStop { return result }
            case .failure(let error):
                throw StageFailure(.invalidInput, "\(file): \(error.description)")
            }
        }
        return result
    }
}

/// A flag one thread sets and another reads.
final class StopFlag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() { value.withLock { $0 = true } }
}
