import Connectors
import Foundation
import Formats
import JSON
import SOQL
import Stages

/// The inputs the fuzzers drive (`scripts/fuzz`), each through the product's own entry point:
/// the CSV reader, the XML reader, the SOQL parser (with binds and a print-and-parse round trip),
/// the pipeline loader, and the emulator's HTTP request handling. The same functions replay the
/// committed corpora in `swift test`, so a finding fixed once stays fixed.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case csv, xml, soql, pipeline, emulator

    /// Where a target's committed corpus lives, under the package root.
    public var corpusDirectory: String { "Fuzz/Corpus/\(rawValue)" }

    /// Feeds one input to a target that needs no server. Any input must return; a crash or a
    /// hang is the finding. `scratch` is a folder the target may write its input file to.
    public func run(_ data: Data, scratch: String) {
        switch self {
        case .csv:
            let path = scratch + "/input.csv"
            guard FileManager.default.createFile(atPath: path, contents: data), let reader = try? CSVReader(path: path) else { return }
            for row in reader {
                if case .malformed(let reason, let line, _) = row { precondition(!reason.isEmpty && line >= 1) }
            }
        case .xml:
            let path = scratch + "/input.xml"
            guard FileManager.default.createFile(atPath: path, contents: data) else { return }
            let reader = XMLRecordReader(path: path, recordElement: "Account", sobjectType: "Account",
                                         children: [.init(element: "Contact", within: "Contacts", sobjectType: "Contact", relationship: nil)])
            if (try? reader.validate()) != nil {
                var count = 0
                try? reader.read { _ in count += 1; return true }
            }
        case .soql:
            let text = String(decoding: data, as: UTF8.self)
            let bound = SOQLBinding.bind(text, values: ["NAME": "x' OR Name != 'y"]).text
            if let query = try? SOQL.parseQuery(bound) {
                // What the printer writes, the parser reads back to the same query.
                let printed = query.description
                guard let again = try? SOQL.parseQuery(printed) else { preconditionFailure("printed query does not parse: \(printed)") }
                precondition(again.description == printed, "print → parse → print changed: \(printed) vs \(again.description)")
            }
            _ = try? SOQL.parseCondition(bound)
            _ = SOQLBinding.substitutionsInsideLiterals(text)
        case .pipeline:
            let path = scratch + "/pipeline.json"
            guard FileManager.default.createFile(atPath: path, contents: data) else { return }
            _ = try? PipelineLoader(variables: VariableResolver(variables: ["TOKEN": "t", "NAME": "n"])).load(path: path)
        case .emulator:
            preconditionFailure("the emulator target runs against a server: use FuzzEmulator")
        }
    }

    /// A fresh scratch folder for this process.
    public static func makeScratch() -> String {
        let path = NSTemporaryDirectory() + "fuzz-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
