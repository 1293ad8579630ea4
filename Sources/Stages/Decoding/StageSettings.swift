import Foundation
import JSON
import SOQL
import Soups

/// The settings of one stage as its type reads them while the pipeline is loaded.
///
/// Each accessor marks its key as used and records a located diagnostic when the value has the
/// wrong type or names an unknown soup or sync, so a stage's `init` can read everything it needs
/// and the loader reports every problem at once — plus any key nobody read, as unknown.
public final class StageSettings {
    /// The raw settings (every key but `id`, `type`, `from`, `after`).
    public let object: JSONObject
    /// The stage's id.
    public let stageId: String
    /// The stage's JSON path, e.g. `stages[2]`.
    public let path: String
    let file: String
    let baseDirectory: String
    /// The soups the pipeline declares.
    public let soups: [SoupSpec]
    /// The syncs the pipeline declares.
    public let syncs: [SyncDefinition]
    /// The variables in force, for `:VAR` binds in SOQL.
    let variables: [String: String]
    /// The stage types and sync targets the pipeline is loaded with.
    public let registry: StageRegistry
    private(set) var used: Set<String> = []
    private(set) var diagnostics: [PipelineDiagnostic] = []

    init(object: JSONObject, stageId: String, path: String, file: String, baseDirectory: String,
         soups: [SoupSpec], syncs: [SyncDefinition], variables: [String: String] = [:], registry: StageRegistry = .builtIn) {
        self.object = object
        self.stageId = stageId
        self.path = path
        self.file = file
        self.baseDirectory = baseDirectory
        self.soups = soups
        self.syncs = syncs
        self.variables = variables
        self.registry = registry
    }

    /// SOQL text (a query or a WHERE condition) with its `:VAR` binds replaced by the variables'
    /// values as escaped string literals; an unset bind is reported.
    public func soql(_ key: String, required: Bool = false) -> String? {
        guard let text = string(key, required: required) else { return nil }
        let bound = SOQLBinding.bind(text, values: variables)
        guard !bound.unset.isEmpty else { return bound.text }
        for name in bound.unset {
            report(key, "bind :\(name) has no value (use --var \(name)=…, --var-file, or the environment)")
        }
        // Bound to an empty literal so the rest of the text is still checked, once.
        var placeholders = variables
        for name in bound.unset { placeholders[name] = "" }
        return SOQLBinding.bind(text, values: placeholders).text
    }

    /// Records a problem with `key` (or with the stage itself when `key` is `nil`).
    public func report(_ key: String?, _ message: String) {
        diagnostics.append(PipelineDiagnostic(file: file, location: key.map { "\(path).\($0)" } ?? path, message: message))
    }

    /// The raw value of `key`, marking it used.
    public func value(_ key: String) -> JSONValue? {
        used.insert(key)
        return object[key]
    }

    /// A string; reports a wrong type, and a missing value when `required`.
    public func string(_ key: String, required: Bool = false) -> String? {
        guard let value = value(key) else {
            if required { report(key, "is required") }
            return nil
        }
        guard let string = value.stringValue else {
            report(key, "must be a string, not \(value.kindName)")
            return nil
        }
        return string
    }

    /// A JSON boolean (`"false"` is an error, not true).
    public func bool(_ key: String, default defaultValue: Bool) -> Bool {
        guard let value = value(key) else { return defaultValue }
        guard let bool = value.boolValue else {
            report(key, "must be a boolean (true or false without quotes), not \(value.kindName) \(value.jsonString)")
            return defaultValue
        }
        return bool
    }

    /// An integer within `range`.
    public func integer(_ key: String, default defaultValue: Int, range: ClosedRange<Int> = Int.min...Int.max) -> Int {
        guard let value = value(key) else { return defaultValue }
        guard case .integer(let number) = value, range.contains(Int(number)) else {
            report(key, "must be an integer\(range == Int.min...Int.max ? "" : " from \(range.lowerBound) to \(range.upperBound)"), not \(value.jsonString)")
            return defaultValue
        }
        return Int(number)
    }

    /// An array of strings; a single string is accepted as a one-element array.
    public func strings(_ key: String) -> [String]? {
        guard let value = value(key) else { return nil }
        if let single = value.stringValue { return [single] }
        guard let array = value.arrayValue else {
            report(key, "must be an array of strings, not \(value.kindName)")
            return nil
        }
        var strings: [String] = []
        for (offset, element) in array.enumerated() {
            guard let string = element.stringValue else {
                diagnostics.append(PipelineDiagnostic(file: file, location: "\(path).\(key)[\(offset)]", message: "must be a string, not \(element.kindName)"))
                continue
            }
            strings.append(string)
        }
        return strings
    }

    /// An object.
    public func object(_ key: String) -> JSONObject? {
        guard let value = value(key) else { return nil }
        guard let object = value.objectValue else {
            report(key, "must be an object, not \(value.kindName)")
            return nil
        }
        return object
    }

    /// One of a fixed set of strings.
    public func choice(_ key: String, of choices: [String], default defaultValue: String) -> String {
        guard let string = string(key) else { return defaultValue }
        guard choices.contains(string) else {
            report(key, "must be one of \(choices.map { "\"\($0)\"" }.joined(separator: ", ")), not \"\(string)\"")
            return defaultValue
        }
        return string
    }

    /// A file path, resolved against the pipeline file's folder.
    public func filePath(_ key: String, required: Bool = false) -> String? {
        string(key, required: required).map { PathResolver.absolute($0, relativeTo: baseDirectory) }
    }

    /// A file the stage reads, made absolute; a missing, unreadable or directory path is reported
    /// now, so `pipeline validate` catches it before any stage runs.
    public func inputFile(_ key: String) -> String? {
        guard let path = filePath(key, required: true) else { return nil }
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            report(key, "no such file: \(path)")
        } else if isDirectory.boolValue {
            report(key, "\(path) is a directory, not a file")
        } else if !FileManager.default.isReadableFile(atPath: path) {
            report(key, "\(path) cannot be read")
        }
        return path
    }

    /// A soup name that the pipeline's `soups` declares.
    public func soup(_ key: String, required: Bool = true) -> String? {
        guard let name = string(key, required: required) else { return nil }
        guard soups.contains(where: { $0.name == name }) else {
            report(key, "no soup named \"\(name)\"; known soups: \(soups.map(\.name).sorted().joined(separator: ", ").ifEmpty("none"))")
            return nil
        }
        return name
    }

    /// A sync name that the pipeline's `syncs` declares, optionally of one type.
    public func sync(_ key: String, type: SyncState.SyncType? = nil, required: Bool = true) -> SyncDefinition? {
        guard let name = string(key, required: required) else { return nil }
        let candidates = syncs.filter { type == nil || $0.type == type }
        guard let sync = candidates.first(where: { $0.name == name }) else {
            let kind = type.map { $0 == .syncUp ? "sync-up " : "sync-down " } ?? ""
            report(key, "no \(kind)sync named \"\(name)\"; known: \(candidates.map(\.name).sorted().joined(separator: ", ").ifEmpty("none"))")
            return nil
        }
        return sync
    }

    /// Reports every key no accessor read.
    func reportUnusedKeys() {
        for key in object.keys where !used.contains(key) {
            report(key, "unknown key for a stage of this type")
        }
    }
}

/// Thrown by a stage's `init(settings:)` that cannot be built because the problems it reported
/// through ``StageSettings`` leave nothing to run; the loader lists those problems only.
public struct StageSettingsInvalid: Error {
    public init() {}
}

extension String {
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}

/// Resolves paths the way pipeline files use them: relative to the pipeline file's folder.
public enum PathResolver {
    /// `path` made absolute against `directory` (and standardized), `~` expanded.
    public static func absolute(_ path: String, relativeTo directory: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded).standardizedFileURL.path }
        return URL(fileURLWithPath: directory).appendingPathComponent(expanded).standardizedFileURL.path
    }
}
