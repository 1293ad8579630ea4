import Connectors
import Foundation
import Formats
import JSON

/// Writes `rejects/<stage id>.csv` in the report directory (`line,reason,raw`), created on the
/// first reject. `line` is the physical line a row starts on (files) or the 1-based position of the
/// record in the stage's input (datasets) — or, for a record read from a file upstream, the line
/// it started on there (its `attributes.line`).
struct RejectsWriter {
    let path: String
    private var handle: FileHandle?

    init(directory: String, stageId: String) {
        path = (directory as NSString).appendingPathComponent("rejects/\(stageId).csv")
    }

    /// The line a record read from a file starts on (`attributes.line`), else `position`.
    static func line(of record: JSONObject, position: Int) -> Int {
        record["attributes"]?["line"]?.integerValue.map(Int.init) ?? position
    }

    mutating func add(line: Int, reason: String, raw: String) throws {
        if handle == nil {
            try PrivateFiles.createDirectory((path as NSString).deletingLastPathComponent)
            guard PrivateFiles.createFile(path, contents: Data("line,reason,raw\r\n".utf8)),
                  let opened = FileHandle(forWritingAtPath: path) else {
                throw StageFailure(.failed, "\(path): cannot write the rejects file")
            }
            opened.seekToEndOfFile()
            handle = opened
        }
        handle?.write(Data((CSVLine.encode([String(line), reason, raw]) + "\r\n").utf8))
    }

    mutating func close() throws {
        try handle?.close()
        handle = nil
    }
}
