import Connectors
import Foundation
import JSON
import SOQL
import Soups

/// Loads a pipeline file: parses it, resolves `${VAR}`s, reads its soups and syncs files, decodes
/// the org and every stage, and checks the graph. Collects every error before failing.
public struct PipelineLoader: Sendable {
    public var registry: StageRegistry
    public var variables: VariableResolver

    public init(registry: StageRegistry = .builtIn, variables: VariableResolver) {
        self.registry = registry
        self.variables = variables
    }

    static let topLevelKeys: Set<String> = ["name", "description", "org", "store", "soups", "syncs", "stages", "dryRun"]
    static let edgeKeys: Set<String> = ["id", "type", "from", "after"]

    /// Loads and validates the pipeline at `path`; throws ``PipelineValidationError`` listing every
    /// error found (warnings are returned in ``PipelineDefinition/warnings``).
    public func load(path: String) throws(PipelineValidationError) -> PipelineDefinition {
        let file = PathResolver.absolute(path, relativeTo: FileManager.default.currentDirectoryPath)
        let directory = (file as NSString).deletingLastPathComponent
        var context = LoadContext(file: file, directory: directory, registry: registry, variables: variables.variables)

        guard let raw = context.readJSON(file) else { throw PipelineValidationError(context.errors) }
        guard let rawObject = raw.objectValue else {
            throw PipelineValidationError([PipelineDiagnostic(file: file, location: "", message: "the pipeline must be a JSON object, not \(raw.kindName)")])
        }
        for key in rawObject.keys where !Self.topLevelKeys.contains(key) {
            context.error(key, "unknown key; expected one of \(Self.topLevelKeys.sorted().joined(separator: ", "))")
        }

        var unset: [VariableResolver.Unset] = []
        var used: [String: String] = [:]
        let resolved = variables.resolve(raw, unset: &unset, used: &used).objectValue!
        for variable in unset {
            if variable.unterminated {
                context.error(variable.path, "\"${\(variable.name)\" has no closing \"}\" (write $${ for a literal ${)")
            } else {
                context.error(variable.path, "variable ${\(variable.name)} is not set (use --var \(variable.name)=…, --var-file, or the environment)")
            }
        }
        context.warnAboutSubstitutionsInSOQLLiterals(rawObject)

        let name = context.string(resolved, "name") ?? ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        let store = context.string(resolved, "store").map { PathResolver.absolute($0, relativeTo: directory) }
            ?? PathResolver.absolute(".pipeline/\(name).sqlite", relativeTo: directory)
        if resolved["description"] != nil { _ = context.string(resolved, "description") }
        let dryRun = context.bool(resolved, "dryRun") ?? false

        var soups = context.soups(resolved["soups"])
        let syncs = context.syncs(resolved["syncs"], soups: soups)
        soups = GraphSyncUpTarget.indexingReferences(soups, for: syncs)
        let org = context.org(resolved: resolved["org"], raw: rawObject["org"], store: store)
        let stages = context.stages(resolved["stages"], soups: soups, syncs: syncs)
        context.checkGraph(stages, declaredIds: Self.declaredIds(resolved["stages"]))
        for (offset, stage) in (rawObject["stages"]?.arrayValue ?? []).enumerated() {
            if let seed = stage["maskSeed"]?.stringValue, !VariableResolver.isSingleReference(seed) {
                context.error("stages[\(offset)].maskSeed", "a mask seed is a secret: write it as exactly one ${VAR} reference, never a literal value (pass it with --var-file or the environment)")
            }
        }

        if !context.errors.isEmpty { throw PipelineValidationError(context.errors) }
        let secretKeys = Self.secretValues(in: rawObject["org"], resolved: resolved["org"])
            + stages.compactMap { $0.settings["maskSeed"]?.stringValue }.filter { !$0.isEmpty }
        return PipelineDefinition(
            name: name, file: file, store: store, org: org, soups: soups, syncs: syncs, stages: stages,
            warnings: context.warnings, secrets: secretKeys, dryRun: dryRun)
    }

    /// Every stage id written in the file, including stages that failed to decode, so edge errors
    /// do not also blame references to them.
    static func declaredIds(_ stages: JSONValue?) -> Set<String> {
        Set((stages?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
    }

    /// The resolved values of secret keys under `org.auth`, for redaction.
    static func secretValues(in raw: JSONValue?, resolved: JSONValue?) -> [String] {
        guard let auth = resolved?["auth"]?.objectValue else { return [] }
        return OrgAuth.secretKeys.compactMap { auth[$0]?.stringValue }.filter { !$0.isEmpty }
    }
}

/// The state of one load: the file, and the diagnostics found so far.
struct LoadContext {
    let file: String
    let directory: String
    /// The stage types and sync targets names resolve to.
    let registry: StageRegistry
    /// The variables in force, for `:VAR` binds.
    var variables: [String: String] = [:]
    var diagnostics: [PipelineDiagnostic] = []
    /// Edge keys (`stages[2].after`) written as arrays, so errors can point at the element.
    var arrayEdges: Set<String> = []

    var errors: [PipelineDiagnostic] { diagnostics.filter { $0.severity == .error } }
    var warnings: [PipelineDiagnostic] { diagnostics.filter { $0.severity == .warning } }

    mutating func error(_ location: String, _ message: String, file: String? = nil) {
        diagnostics.append(PipelineDiagnostic(file: file ?? self.file, location: location, message: message))
    }

    /// `${VAR}` inside a quoted literal of a stage's or inline sync's SOQL is spliced in as text,
    /// so its value can end the literal and change the query: a warning that points at `:VAR`.
    mutating func warnAboutSubstitutionsInSOQLLiterals(_ raw: JSONObject) {
        var places: [(String, String)] = []
        for (offset, stage) in (raw["stages"]?.arrayValue ?? []).enumerated() {
            for key in ["where", "query"] { if let text = stage[key]?.stringValue { places.append(("stages[\(offset)].\(key)", text)) } }
        }
        for (offset, sync) in (raw["syncs"]?.arrayValue ?? []).enumerated() {
            for key in ["query", "parentSoqlFilter"] {
                if let text = sync["target"]?[key]?.stringValue { places.append(("syncs[\(offset)].target.\(key)", text)) }
            }
        }
        for (location, text) in places {
            for name in SOQLBinding.substitutionsInsideLiterals(text) {
                diagnostics.append(PipelineDiagnostic(.warning, file: file, location: location, message:
                    "${\(name)} inside a quoted SOQL literal is spliced in as text, so a quote in its value changes the query; bind it instead: write :\(name) without quotes"))
            }
        }
    }

    /// Reads and parses a JSON file, recording read and syntax errors; repeated keys are warnings.
    mutating func readJSON(_ path: String) -> JSONValue? {
        guard let data = FileManager.default.contents(atPath: path) else {
            error("", FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file")
            diagnostics[diagnostics.count - 1].file = path
            return nil
        }
        do {
            let (value, duplicates) = try JSONParser.parse(data)
            for duplicate in duplicates {
                diagnostics.append(PipelineDiagnostic(.warning, file: path, location: duplicate.path,
                                                      message: "key repeated (line \(duplicate.line)); the last value is used"))
            }
            return value
        } catch {
            diagnostics.append(PipelineDiagnostic(file: path, location: "line \(error.line), column \(error.column)", message: error.message))
            return nil
        }
    }

    mutating func bool(_ object: JSONObject, _ key: String) -> Bool? {
        guard let value = object[key] else { return nil }
        guard let bool = value.boolValue else {
            error(key, "must be true or false, not \(value.kindName)")
            return nil
        }
        return bool
    }

    mutating func string(_ object: JSONObject, _ key: String, path: String? = nil) -> String? {
        guard let value = object[key] else { return nil }
        guard let string = value.stringValue else {
            error(path ?? key, "must be a string, not \(value.kindName)")
            return nil
        }
        return string
    }

    // MARK: soups and syncs

    mutating func soups(_ value: JSONValue?) -> [SoupSpec] {
        guard let value else { return [] }
        if let path = value.stringValue {
            let absolute = PathResolver.absolute(path, relativeTo: directory)
            guard let document = readJSON(absolute) else { return [] }
            var decoder = MobileSDKConfigDecoder(file: absolute, registry: registry)
            let specs = decoder.soups(from: document, path: "")
            diagnostics += decoder.diagnostics
            return specs
        }
        var decoder = MobileSDKConfigDecoder(file: file, registry: registry)
        let specs = decoder.soups(from: value, path: "soups")
        diagnostics += decoder.diagnostics
        return specs
    }

    mutating func syncs(_ value: JSONValue?, soups: [SoupSpec]) -> [SyncDefinition] {
        guard let value else { return [] }
        var syncs: [SyncDefinition]
        if let path = value.stringValue {
            let absolute = PathResolver.absolute(path, relativeTo: directory)
            guard let document = readJSON(absolute) else { return [] }
            var decoder = MobileSDKConfigDecoder(file: absolute, registry: registry)
            syncs = decoder.syncs(from: document, path: "", soups: soups)
            diagnostics += decoder.diagnostics
        } else {
            var decoder = MobileSDKConfigDecoder(file: file, registry: registry)
            syncs = decoder.syncs(from: value, path: "syncs", soups: soups)
            diagnostics += decoder.diagnostics
        }
        // `:VAR` binds in a sync target's SOQL.
        for index in syncs.indices {
            for key in ["query", "parentSoqlFilter"] {
                guard let text = syncs[index].target[key]?.stringValue else { continue }
                let bound = SOQLBinding.bind(text, values: variables)
                syncs[index].target[key] = .string(bound.text)
                for name in bound.unset {
                    let location = syncs[index].path.isEmpty ? "target.\(key)" : "\(syncs[index].path).target.\(key)"
                    error(location, "bind :\(name) has no value (use --var \(name)=…, --var-file, or the environment)", file: syncs[index].file)
                }
            }
        }
        return syncs
    }

    // MARK: org

    mutating func org(resolved: JSONValue?, raw: JSONValue?, store: String) -> OrgConfiguration? {
        guard let resolved else { return nil }
        guard let org = resolved.objectValue else {
            error("org", "must be an object, not \(resolved.kindName)")
            return nil
        }
        if let emulatorValue = org["emulator"] {
            for key in org.keys where key != "emulator" {
                error("org.\(key)", "unknown key; an emulator org takes only \"emulator\"")
            }
            guard let emulator = emulatorValue.objectValue else {
                error("org.emulator", "must be an object (seed, database, faults)")
                return nil
            }
            for key in emulator.keys where !["seed", "database", "faults"].contains(key) {
                error("org.emulator.\(key)", "unknown key; expected seed, database or faults")
            }
            let seed = emulatorPath(emulator, "seed")
            let database = emulatorPath(emulator, "database") ?? store + ".org.sqlite"
            let faults = emulatorPath(emulator, "faults")
            for (key, value) in [("seed", seed), ("faults", faults)] {
                if let value, !FileManager.default.fileExists(atPath: value) { error("org.emulator.\(key)", "no such file: \(value)") }
            }
            return .emulator(.init(seed: seed, database: database, faults: faults))
        }
        let known: Set<String> = ["instanceUrl", "loginUrl", "apiVersion", "maxInFlight", "timeoutSeconds", "requestDeadlineSeconds", "headers", "auth"]
        for key in org.keys where !known.contains(key) {
            error("org.\(key)", "unknown key; expected \"emulator\" or \(known.sorted().joined(separator: ", "))")
        }
        let instanceUrl = string(org, "instanceUrl", path: "org.instanceUrl")
        let loginUrl = string(org, "loginUrl", path: "org.loginUrl")
        for (key, url) in [("instanceUrl", instanceUrl), ("loginUrl", loginUrl)] {
            guard let url else { continue }
            if URL(string: url)?.scheme == nil || URL(string: url)?.host == nil {
                error("org.\(key)", "must be an absolute URL such as https://example.my.salesforce.com, not \"\(url)\"")
            } else if URL(string: url)?.scheme?.lowercased() != "https", !LoopbackHost.contains(URL(string: url)?.host ?? "") {
                error("org.\(key)", "must use https: plain http would send credentials in clear text, and is allowed only to this machine (127.0.0.0/8, ::1, localhost)")
            }
        }
        let apiVersion = string(org, "apiVersion", path: "org.apiVersion")
        if let apiVersion, Double(apiVersion) == nil { error("org.apiVersion", "must look like \"62.0\", not \"\(apiVersion)\"") }
        var maxInFlight: Int?
        if let value = org["maxInFlight"] {
            if case .integer(let number) = value, number >= 1, number <= 64 { maxInFlight = Int(number) } else {
                error("org.maxInFlight", "must be an integer from 1 to 64")
            }
        }
        func seconds(_ key: String) -> Double? {
            guard let value = org[key] else { return nil }
            if let number = value.doubleValue ?? value.integerValue.map(Double.init), number > 0, number <= 86_400 { return number }
            error("org.\(key)", "must be a number of seconds from 0 to 86400")
            return nil
        }
        let timeout = seconds("timeoutSeconds")
        let deadline = seconds("requestDeadlineSeconds")
        var headers: [String: String] = [:]
        if let value = org["headers"] {
            if let object = value.objectValue {
                for (key, header) in object {
                    if let string = header.stringValue { headers[key] = string } else { error("org.headers.\(key)", "must be a string") }
                }
            } else {
                error("org.headers", "must be an object of header names to values")
            }
        }
        guard let authValue = org["auth"] else {
            error("org", "a real org needs \"auth\" (or use {\"emulator\": {…}})")
            return nil
        }
        guard let auth = authValue.objectValue, let rawAuth = raw?["auth"]?.objectValue else {
            error("org.auth", "must be an object with a \"flow\"")
            return nil
        }
        guard let orgAuth = decodeAuth(auth, raw: rawAuth) else { return nil }
        if instanceUrl == nil && loginUrl == nil, case .accessToken = orgAuth {
            error("org.instanceUrl", "is required with the access_token flow")
        }
        return .remote(.init(instanceUrl: instanceUrl, loginUrl: loginUrl, apiVersion: apiVersion, maxInFlight: maxInFlight,
                             timeoutSeconds: timeout, requestDeadlineSeconds: deadline, headers: headers, auth: orgAuth))
    }

    mutating func emulatorPath(_ emulator: JSONObject, _ key: String) -> String? {
        string(emulator, key, path: "org.emulator.\(key)").map { PathResolver.absolute($0, relativeTo: directory) }
    }

    mutating func decodeAuth(_ auth: JSONObject, raw: JSONObject) -> OrgAuth? {
        guard let flow = auth["flow"]?.stringValue, OrgAuth.flowNames.contains(flow) else {
            error("org.auth.flow", "must be one of \(OrgAuth.flowNames.joined(separator: ", "))")
            return nil
        }
        let keys: [String: (required: [String], optional: [String])] = [
            "password": (["username", "password", "clientId"], ["securityToken", "clientSecret"]),
            "refresh_token": (["refreshToken", "clientId"], ["clientSecret"]),
            "client_credentials": (["clientId", "clientSecret"], []),
            "jwt": (["clientId", "username", "privateKeyFile"], []),
            "access_token": (["accessToken"], []),
            "sfdx_auth_url": (["authUrl"], []),
        ]
        let (required, optional) = keys[flow]!
        var values: [String: String] = [:]
        var ok = true
        for key in auth.keys where key != "flow" && !required.contains(key) && !optional.contains(key) {
            error("org.auth.\(key)", "unknown key for the \(flow) flow; expected \((required + optional).joined(separator: ", "))")
            ok = false
        }
        for key in required + optional {
            guard let value = auth[key] else {
                if required.contains(key) { error("org.auth.\(key)", "is required for the \(flow) flow"); ok = false }
                continue
            }
            guard let string = value.stringValue else { error("org.auth.\(key)", "must be a string"); ok = false; continue }
            if OrgAuth.secretKeys.contains(key), !VariableResolver.isSingleReference(raw[key]?.stringValue ?? "") {
                error("org.auth.\(key)", "a secret must be exactly one ${VAR} reference, never a literal value (pass it with --var-file or the environment)")
                ok = false
                continue
            }
            values[key] = key == "privateKeyFile" ? PathResolver.absolute(string, relativeTo: directory) : string
        }
        guard ok else { return nil }
        switch flow {
        case "password":
            return .password(username: values["username"]!, password: values["password"]!, securityToken: values["securityToken"],
                             clientId: values["clientId"]!, clientSecret: values["clientSecret"])
        case "refresh_token":
            return .refreshToken(refreshToken: values["refreshToken"]!, clientId: values["clientId"]!, clientSecret: values["clientSecret"])
        case "client_credentials":
            return .clientCredentials(clientId: values["clientId"]!, clientSecret: values["clientSecret"]!)
        case "jwt":
            return .jwt(clientId: values["clientId"]!, username: values["username"]!, privateKeyFile: values["privateKeyFile"]!)
        case "access_token":
            return .accessToken(accessToken: values["accessToken"]!)
        default:
            return .sfdxAuthURL(authUrl: values["authUrl"]!)
        }
    }

    // MARK: stages

    mutating func stages(_ value: JSONValue?, soups: [SoupSpec], syncs: [SyncDefinition]) -> [StageDefinition] {
        guard let value else {
            error("stages", "is required (an array of stages)")
            return []
        }
        guard let array = value.arrayValue else {
            error("stages", "must be an array, not \(value.kindName)")
            return []
        }
        var stages: [StageDefinition] = []
        var seen: [String: String] = [:]
        for (offset, element) in array.enumerated() {
            let path = "stages[\(offset)]"
            guard let object = element.objectValue else { error(path, "must be an object"); continue }
            guard let id = string(object, "id", path: "\(path).id"), !id.isEmpty else {
                if object["id"] == nil { error("\(path).id", "is required") }
                continue
            }
            if let first = seen[id] {
                error("\(path).id", "duplicate stage id \"\(id)\" (also \(first))")
                continue
            }
            seen[id] = path
            guard let typeName = string(object, "type", path: "\(path).type") else {
                if object["type"] == nil { error("\(path).type", "is required") }
                continue
            }
            let from = edgeList(object["from"], path: "\(path).from")
            let after = edgeList(object["after"], path: "\(path).after")
            guard let stageType = registry.type(named: typeName) else {
                error("\(path).type", "unknown stage type \"\(typeName)\"; known types: \(registry.typeNames.joined(separator: ", "))")
                continue
            }
            var settingsObject = JSONObject()
            for (key, member) in object where !PipelineLoader.edgeKeys.contains(key) { settingsObject[key] = member }
            let settings = StageSettings(object: settingsObject, stageId: id, path: path, file: file, baseDirectory: directory,
                                         soups: soups, syncs: syncs, variables: variables,
                                         registry: registry)
            do {
                let stage = try stageType.init(settings: settings)
                settings.reportUnusedKeys()
                diagnostics += settings.diagnostics
                stages.append(StageDefinition(id: id, type: typeName, from: from, after: after, settings: settingsObject,
                                              path: path, stage: stage))
            } catch {
                diagnostics += settings.diagnostics
                if !(error is StageSettingsInvalid) || settings.diagnostics.isEmpty { self.error(path, "\(error)") }
            }
        }
        return stages
    }

    mutating func edgeList(_ value: JSONValue?, path: String) -> [String] {
        guard let value else { return [] }
        if let single = value.stringValue { return [single] }
        guard let array = value.arrayValue else {
            error(path, "must be a stage id or an array of stage ids, not \(value.kindName)")
            return []
        }
        arrayEdges.insert(path)
        return array.enumerated().compactMap { offset, element in
            guard let id = element.stringValue else {
                error("\(path)[\(offset)]", "must be a stage id string")
                return nil
            }
            return id
        }
    }

    /// Unknown `from` / `after` ids, self-references and cycles.
    mutating func checkGraph(_ stages: [StageDefinition], declaredIds ids: Set<String>) {
        for stage in stages {
            for (key, list) in [("from", stage.from), ("after", stage.after)] {
                for (offset, id) in list.enumerated() where !ids.contains(id) || id == stage.id {
                    let location = "\(stage.path).\(key)" + (arrayEdges.contains("\(stage.path).\(key)") ? "[\(offset)]" : "")
                    error(location, id == stage.id ? "a stage cannot depend on itself" : "no stage with id \"\(id)\"; known ids: \(ids.sorted().joined(separator: ", "))")
                }
            }
        }
        if let cycle = StageGraph(stages: stages).firstCycle() {
            let path = stages.first { $0.id == cycle[0] }?.path ?? "stages"
            error(path, "the stages form a cycle: \(cycle.joined(separator: " → "))")
        }
    }
}
