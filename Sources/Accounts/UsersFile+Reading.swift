import ConfigText

extension UsersFile {
    /// The content of the file, read from its JSON with the place of every
    /// value, so that a mistake is told by line and column in words (what
    /// was expected there), never as a decoder's dump.
    struct Reader {
        /// The file, named in every message.
        let path: String

        /// The file's content in `bytes`.
        /// - Throws: ``AccountsError`` `.damaged`, naming the file, the line, the column and what was expected.
        func content(of bytes: [UInt8]) throws(AccountsError) -> FileContent {
            let root: ConfigNode
            do {
                root = try ConfigNode.parseJSON(String(decoding: bytes, as: UTF8.self))
            } catch {
                throw damaged(error.message, at: error.position)
            }
            let members = try table(root, "the users file")
            let format = try string(try member("format", of: members, in: root), "\"format\"")
            guard format == UsersFile.format else {
                // Any other format is one this version cannot read: the fix is a newer fileshare, not an edit.
                throw AccountsError(
                    .damaged,
                    "\(path) has the format '\(format)', not '\(UsersFile.format)': a newer fileshare wrote it")
            }
            var users: [String: FileContent.User] = [:]
            for (name, node) in try table(try member("users", of: members, in: root), "\"users\"") {
                let fields = try table(node, "the user \"\(name)\"")
                let password = try string(try member("password", of: fields, in: node), "the password of \"\(name)\"")
                var admin: Bool? = nil
                if let node = optional("admin", of: fields), !isNull(node) {
                    admin = try boolean(node, "\"admin\" of \"\(name)\"")
                }
                users[name] = FileContent.User(password: password, admin: admin)
            }
            var groups: [String: [String]]? = nil
            if let node = optional("groups", of: members), !isNull(node) {
                var found: [String: [String]] = [:]
                for (name, list) in try table(node, "\"groups\"") {
                    var names: [String] = []
                    for member in try self.list(list, "the group \"\(name)\"") {
                        names.append(try string(member, "a member of the group \"\(name)\""))
                    }
                    found[name] = names
                }
                groups = found
            }
            var grants: [FileContent.Grant] = []
            for node in try list(try member("grants", of: members, in: root), "\"grants\"") {
                let fields = try table(node, "a grant")
                grants.append(
                    FileContent.Grant(
                        to: try string(try member("to", of: fields, in: node), "\"to\" of a grant"),
                        path: try string(try member("path", of: fields, in: node), "\"path\" of a grant"),
                        right: try string(try member("right", of: fields, in: node), "\"right\" of a grant")))
            }
            return FileContent(format: format, users: users, groups: groups, grants: grants)
        }

        /// The message for a mistake at `position`, with the fix that works:
        /// `fileshare users` reads the file too, so it must be corrected (or set aside) first.
        func damaged(_ problem: String, at position: SourcePosition?) -> AccountsError {
            let place = position.map { " (\($0))" } ?? ""
            return AccountsError(
                .damaged,
                "\(path)\(place) is not a users file as fileshare writes it: \(problem). Correct it there, "
                    + "or move it aside and make a new one with 'fileshare users add NAME --users \(path)'")
        }

        func member(_ key: String, of members: [(key: String, node: ConfigNode)], in object: ConfigNode)
            throws(AccountsError) -> ConfigNode
        {
            guard let node = optional(key, of: members) else {
                throw damaged("expected a member \"\(key)\" in this object", at: object.position)
            }
            return node
        }

        func isNull(_ node: ConfigNode) -> Bool {
            if case .null = node.value { return true }
            return false
        }

        func optional(_ key: String, of members: [(key: String, node: ConfigNode)]) -> ConfigNode? {
            members.first { $0.key == key }?.node
        }

        func table(_ node: ConfigNode, _ what: String) throws(AccountsError) -> [(key: String, node: ConfigNode)] {
            guard case .table(let members) = node.value else { throw expected("an object", for: what, found: node) }
            return members
        }

        func list(_ node: ConfigNode, _ what: String) throws(AccountsError) -> [ConfigNode] {
            guard case .list(let elements) = node.value else { throw expected("a list", for: what, found: node) }
            return elements
        }

        func string(_ node: ConfigNode, _ what: String) throws(AccountsError) -> String {
            guard case .string(let text) = node.value else { throw expected("a string", for: what, found: node) }
            return text
        }

        func boolean(_ node: ConfigNode, _ what: String) throws(AccountsError) -> Bool {
            guard case .boolean(let value) = node.value else { throw expected("true or false", for: what, found: node) }
            return value
        }

        func expected(_ kind: String, for what: String, found node: ConfigNode) -> AccountsError {
            // JSON's words: an object, not a table.
            let found = if case .table = node.value { "an object" } else { node.kindDescription }
            return damaged("expected \(kind) for \(what), found \(found)", at: node.position)
        }
    }
}
