import Foundation

extension OrgEngine {
    /// `POST /services/Soap/u/NN.N` with the partner API's `login` call, as simple-salesforce,
    /// amaxa and aiosalesforce use it: the username and the password (followed by the user's
    /// security token when it has one) give a `loginResponse` with a session id that works as a
    /// bearer token, the server URL and the user's details; anything else is the `INVALID_LOGIN`
    /// fault a real org answers with HTTP 500. Only `login` is served of the SOAP API.
    func soapLogin(_ request: EmulatorRequest, version: String) -> EmulatorResponse {
        let body = String(decoding: request.body, as: UTF8.self)
        guard request.method == "POST", Self.soapElement("login", in: body) != nil else {
            return soapFault("UNKNOWN_EXCEPTION", "only the login call of the SOAP API is served by the emulator")
        }
        guard let username = Self.soapElement("username", in: body), let password = Self.soapElement("password", in: body),
              let user = seed.users.first(where: { $0.username == username }), password == user.password + (user.securityToken ?? "") else {
            return soapFault("INVALID_LOGIN", "Invalid username, password, security token; or user locked out.", loginFault: true)
        }
        let session = newSession(for: user)
        let userId = userId(for: user.username)
        let base = "\(instanceURL)/services/Soap"
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" \
            xmlns="urn:partner.soap.sforce.com" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><loginResponse><result>\
            <metadataServerUrl>\(base)/m/\(version)/\(orgId)</metadataServerUrl><passwordExpired>false</passwordExpired>\
            <sandbox>\(seed.isSandbox)</sandbox><serverUrl>\(base)/u/\(version)/\(orgId)</serverUrl>\
            <sessionId>\(Self.xmlEscaped(session))</sessionId><userId>\(userId)</userId><userInfo>\
            <currencySymbol>$</currencySymbol><organizationId>\(orgId)</organizationId>\
            <organizationMultiCurrency>false</organizationMultiCurrency><organizationName>\(Self.xmlEscaped(seed.orgName))</organizationName>\
            <sessionSecondsValid>7200</sessionSecondsValid><userDefaultCurrencyIsoCode xsi:nil="true"/>\
            <userEmail>\(Self.xmlEscaped(user.username))</userEmail><userFullName>\(Self.xmlEscaped(user.username))</userFullName>\
            <userId>\(userId)</userId><userLanguage>en_US</userLanguage><userLocale>en_US</userLocale>\
            <userName>\(Self.xmlEscaped(user.username))</userName><userTimeZone>GMT</userTimeZone><userType>Standard</userType>\
            </userInfo></result></loginResponse></soapenv:Body></soapenv:Envelope>
            """
        return EmulatorResponse(status: 200, headers: [("Content-Type", "text/xml;charset=UTF-8")], body: Data(xml.utf8))
    }

    private func soapFault(_ code: String, _ message: String, loginFault: Bool = false) -> EmulatorResponse {
        let detail = loginFault
            ? "<detail><sf:LoginFault xsi:type=\"sf:LoginFault\"><sf:exceptionCode>\(code)</sf:exceptionCode><sf:exceptionMessage>\(Self.xmlEscaped(message))</sf:exceptionMessage></sf:LoginFault></detail>"
            : ""
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" \
            xmlns:sf="urn:fault.partner.soap.sforce.com" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><soapenv:Fault>\
            <faultcode>sf:\(code)</faultcode><faultstring>\(code): \(Self.xmlEscaped(message))</faultstring>\(detail)</soapenv:Fault>\
            </soapenv:Body></soapenv:Envelope>
            """
        return EmulatorResponse(status: 500, headers: [("Content-Type", "text/xml;charset=UTF-8")], body: Data(xml.utf8))
    }

    /// The text of the first element named `name` (any namespace prefix), entities decoded. The
    /// envelope is read as text, not by Foundation's XML parser, which traps on some malformed input.
    static func soapElement(_ name: String, in xml: String) -> String? {
        guard let match = xml.range(of: "<([A-Za-z0-9_]+:)?\(name)(\\s[^>]*)?>", options: .regularExpression) else { return nil }
        let rest = xml[match.upperBound...]
        guard let close = rest.range(of: "</([A-Za-z0-9_]+:)?\(name)\\s*>", options: .regularExpression) else { return nil }
        return xmlUnescaped(String(rest[..<close.lowerBound]))
    }

    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func xmlUnescaped(_ text: String) -> String {
        var output = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            output += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semicolon) <= 10 else {
                output += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "amp": output += "&"
            case "lt": output += "<"
            case "gt": output += ">"
            case "quot": output += "\""
            case "apos": output += "'"
            default:
                let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let number, let scalar = Unicode.Scalar(number) { output.unicodeScalars.append(scalar) } else { output += "&\(entity);" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return output + rest
    }
}
