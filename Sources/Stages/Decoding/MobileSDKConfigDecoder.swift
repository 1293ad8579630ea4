import Foundation
import JSON
import Soups

/// Reads Mobile SDK `userstore.json` / `usersyncs.json` content (from a file or inline) as apps
/// write it: both platforms' key spellings, repeated keys accepted with a warning (last wins), keys
/// we do not use reported as warnings.
struct MobileSDKConfigDecoder {
    var file: String
    /// The sync targets a sync may name.
    let registry: StageRegistry
    var diagnostics: [PipelineDiagnostic] = []

    init(file: String, registry: StageRegistry) {
        self.file = file
        self.registry = registry
    }

    mutating func error(_ path: String, _ message: String) {
        diagnostics.append(PipelineDiagnostic(file: file, location: path, message: message))
    }

    mutating func warning(_ path: String, _ message: String) {
        diagnostics.append(PipelineDiagnostic(.warning, file: file, location: path, message: message))
    }

    mutating func warnUnknownKeys(_ object: JSONObject, known: Set<String>, path: String) {
        for key in object.keys where !known.contains(key) {
            warning(path.isEmpty ? key : "\(path).\(key)", "key not used by SyncPipeline; ignored")
        }
    }

    // MARK: Soups

    /// Soups from a `{"soups": [...]}` document, or from a bare array when inline.
    mutating func soups(from value: JSONValue, path: String) -> [SoupSpec] {
        var list = value
        var listPath = path
        if let object = value.objectValue {
            warnUnknownKeys(object, known: ["soups"], path: path)
            guard let soups = object["soups"] else {
                error(path, "expected a \"soups\" array")
                return []
            }
            list = soups
            listPath = path.isEmpty ? "soups" : "\(path).soups"
        }
        guard let array = list.arrayValue else {
            error(listPath, "must be an array of soups, not \(list.kindName)")
            return []
        }
        var specs: [SoupSpec] = []
        for (offset, element) in array.enumerated() {
            let soupPath = "\(listPath)[\(offset)]"
            guard let soup = element.objectValue else { error(soupPath, "must be an object"); continue }
            warnUnknownKeys(soup, known: ["soupName", "indexes"], path: soupPath)
            guard let name = soup["soupName"]?.stringValue, !name.isEmpty else {
                error("\(soupPath).soupName", "is required (a non-empty string)")
                continue
            }
            if specs.contains(where: { $0.name == name }) { error("\(soupPath).soupName", "soup \"\(name)\" is declared twice"); continue }
            var indexes: [IndexSpec] = []
            for (indexOffset, indexValue) in (soup["indexes"]?.arrayValue ?? []).enumerated() {
                let indexPath = "\(soupPath).indexes[\(indexOffset)]"
                guard let index = indexValue.objectValue else { error(indexPath, "must be an object"); continue }
                warnUnknownKeys(index, known: ["path", "type"], path: indexPath)
                guard let indexPathValue = index["path"]?.stringValue, !indexPathValue.isEmpty else {
                    error("\(indexPath).path", "is required (a non-empty string)")
                    continue
                }
                guard let typeName = index["type"]?.stringValue, let type = IndexType(rawValue: typeName) else {
                    error("\(indexPath).type", "must be one of \(IndexType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
                    continue
                }
                if indexes.contains(where: { $0.path == indexPathValue }) {
                    error("\(indexPath).path", "\"\(indexPathValue)\" is indexed twice")
                    continue
                }
                indexes.append(IndexSpec(path: indexPathValue, type: type))
            }
            if soup["indexes"] != nil && soup["indexes"]?.arrayValue == nil { error("\(soupPath).indexes", "must be an array") }
            specs.append(SoupSpec(name: name, indexes: indexes))
        }
        return specs
    }

    // MARK: Syncs

    static let knownTargetKeys: Set<String> = [
        "type", "iOSImpl", "AndroidImpl", "androidImpl", "idFieldName", "modificationDateFieldName", "query", "maxBatchSize",
        "parent", "children", "parentFieldlist", "childrenFieldlist", "relationshipType", "parentSoqlFilter",
        "createFieldlist", "updateFieldlist", "parentCreateFieldlist", "parentUpdateFieldlist", "childrenCreateFieldlist",
        "childrenUpdateFieldlist", "externalIdFieldName", "sobjectType", "fieldlist", "soupName", "objects",
    ]
    static let knownInfoKeys: Set<String> = [
        "idFieldName", "sobjectType", "modificationDateFieldName", "soupName", "parentIdFieldName", "sobjectTypePlural",
        "externalIdFieldName",
    ]

    /// Syncs from a `{"syncs": [...]}` document, or from a bare array when inline.
    mutating func syncs(from value: JSONValue, path: String, soups: [SoupSpec]) -> [SyncDefinition] {
        var list = value
        var listPath = path
        if let object = value.objectValue {
            warnUnknownKeys(object, known: ["syncs"], path: path)
            guard let syncs = object["syncs"] else {
                error(path, "expected a \"syncs\" array")
                return []
            }
            list = syncs
            listPath = path.isEmpty ? "syncs" : "\(path).syncs"
        }
        guard let array = list.arrayValue else {
            error(listPath, "must be an array of syncs, not \(list.kindName)")
            return []
        }
        var syncs: [SyncDefinition] = []
        for (offset, element) in array.enumerated() {
            let syncPath = "\(listPath)[\(offset)]"
            guard let sync = element.objectValue else { error(syncPath, "must be an object"); continue }
            warnUnknownKeys(sync, known: ["syncName", "syncType", "soupName", "target", "options"], path: syncPath)
            guard let name = sync["syncName"]?.stringValue, !name.isEmpty else {
                error("\(syncPath).syncName", "is required (a non-empty string)")
                continue
            }
            if syncs.contains(where: { $0.name == name }) { error("\(syncPath).syncName", "sync \"\(name)\" is declared twice"); continue }
            guard let typeName = sync["syncType"]?.stringValue, let type = SyncState.SyncType(rawValue: typeName) else {
                error("\(syncPath).syncType", "must be \"syncDown\" or \"syncUp\"")
                continue
            }
            // A graph's objects name their soups: the sync's own soup, optional there, is its first.
            let graphSoup = sync["target"]?["type"]?.stringValue == "graph" ? sync["target"]?["objects"]?[0]?["soupName"]?.stringValue : nil
            guard let soupName = sync["soupName"]?.stringValue ?? graphSoup else {
                error("\(syncPath).soupName", "is required")
                continue
            }
            if !soups.contains(where: { $0.name == soupName }) {
                error("\(syncPath).soupName", "no soup named \"\(soupName)\"; known soups: \(soups.map(\.name).sorted().joined(separator: ", ").ifEmpty("none"))")
            }
            guard let target = sync["target"]?.objectValue else {
                error("\(syncPath).target", "is required (an object)")
                continue
            }
            checkTarget(target, type: type, path: "\(syncPath).target", soups: soups)
            let options = sync["options"]?.objectValue ?? JSONObject()
            if sync["options"] != nil && sync["options"]?.objectValue == nil { error("\(syncPath).options", "must be an object") }
            // A target's key written under options would be ignored and change what the sync
            // does (an upsert by external id becoming a plain create): an error, not a warning.
            let targetKeys: Set<String> = ["externalIdFieldName", "idFieldName", "modificationDateFieldName", "createFieldlist",
                                           "updateFieldlist", "parentCreateFieldlist", "parentUpdateFieldlist", "childrenCreateFieldlist",
                                           "childrenUpdateFieldlist", "query", "soql", "parent", "children", "relationshipType", "sobjectType"]
            for key in options.keys.sorted() where targetKeys.contains(key) {
                error("\(syncPath).options.\(key)", "belongs in the sync's target, not its options (options hold mergeMode and fieldlist); here it would be ignored")
            }
            warnUnknownKeys(options, known: targetKeys.union(["mergeMode", "fieldlist"]), path: "\(syncPath).options")
            if let mode = options["mergeMode"], !["OVERWRITE", "LEAVE_IF_CHANGED"].contains(mode.stringValue ?? "") {
                error("\(syncPath).options.mergeMode", "must be \"OVERWRITE\" or \"LEAVE_IF_CHANGED\", not \(mode.jsonString)")
            }
            syncs.append(SyncDefinition(name: name, type: type, soupName: soupName, target: target, options: options,
                                        file: file, path: syncPath))
        }
        warnAboutChainedParentChildren(syncs)
        return syncs
    }

    /// Parent-children sync ups chained through a soup (A's children are B's parents) do not pass
    /// ids along the chain: B's children that name a parent A creates keep its `local_` id.
    private mutating func warnAboutChainedParentChildren(_ syncs: [SyncDefinition]) {
        let trees = syncs.filter { sync in
            sync.type == .syncUp && sync.targetName.flatMap { registry.syncUpTarget(named: $0)?.name } == "parent_children"
        }
        for upper in trees {
            guard let middle = upper.target["children"]?["soupName"]?.stringValue else { continue }
            for lower in trees where lower.target["parent"]?["soupName"]?.stringValue == middle {
                warning("\(lower.path).target.parent.soupName",
                        "\(middle) holds the children of sync \"\(upper.name)\": new \(middle) records get their ids there, and the children of this sync that refer to them keep their local_ ids (reported UNRESOLVED_REFERENCE); declare the chain as one sync with \"type\": \"graph\"")
            }
        }
    }

    private mutating func checkTarget(_ target: JSONObject, type: SyncState.SyncType, path: String, soups: [SoupSpec]) {
        let kind = type == .syncUp ? "sync-up" : "sync-down"
        let registered = registry.syncTargetNames(type).joined(separator: ", ").ifEmpty("none")
        guard let (name, key) = SyncDefinition.targetName(of: target, type: type) else {
            error("\(path).type", "is required: the \(kind) target to use (registered: \(registered))")
            return
        }
        let found = type == .syncUp ? registry.syncUpTarget(named: name)?.name : registry.syncDownTarget(named: name)?.name
        guard let found else {
            error("\(path).\(key)", "no \(kind) target named \"\(name)\" is registered (registered: \(registered), and Mobile SDK's class names for them)")
            return
        }
        // A target of the user's own reads keys of its own.
        guard StageRegistry.builtIn.syncTargetNames(type).contains(found) else { return }
        warnUnknownKeys(target, known: Self.knownTargetKeys, path: path)
        if type == .syncDown && found == "soql" && target["query"]?.stringValue == nil { error("\(path).query", "is required for a soql target") }
        let isParentChildren = found == "parent_children"
        guard isParentChildren else { return }
        for key in ["parent", "children"] {
            guard let info = target[key]?.objectValue else {
                error("\(path).\(key)", "is required for a parent-children target")
                continue
            }
            warnUnknownKeys(info, known: Self.knownInfoKeys, path: "\(path).\(key)")
            if info["sobjectType"]?.stringValue == nil { error("\(path).\(key).sobjectType", "is required") }
            if let soup = info["soupName"]?.stringValue, !soups.contains(where: { $0.name == soup }) {
                error("\(path).\(key).soupName", "no soup named \"\(soup)\"; known soups: \(soups.map(\.name).sorted().joined(separator: ", ").ifEmpty("none"))")
            } else if info["soupName"]?.stringValue == nil {
                error("\(path).\(key).soupName", "is required")
            }
        }
        if let children = target["children"]?.objectValue, children["parentIdFieldName"]?.stringValue == nil {
            error("\(path).children.parentIdFieldName", "is required")
        }
        if let relationship = target["relationshipType"], !["MASTER_DETAIL", "LOOKUP"].contains(relationship.stringValue ?? "") {
            error("\(path).relationshipType", "must be \"MASTER_DETAIL\" or \"LOOKUP\", not \(relationship.jsonString)")
        }
    }
}
