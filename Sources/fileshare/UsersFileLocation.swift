/// Where `fileshare users` finds the users file without `--users`: the
/// `users` setting of the configuration `fileshare serve` reads
/// (`FILESHARE_USERS` over the file of `--config` or `FILESHARE_CONFIG`),
/// with the shared folder it names, to check the paths of grants against.
struct UsersFileLocation: Sendable, Equatable {
    /// The users file.
    var users: String
    /// The shared folder, when the environment or the file names one.
    var folder: String?

    /// The users file `given` with `--users`, else the configuration's.
    /// - Parameter config: The file of `--config`, if given.
    /// - Throws: ``ConfigurationProblems``: the file's mistakes, or no users
    ///   file named anywhere.
    static func resolve(
        given: String?, config: String?, environment: [String: String]
    ) throws(ConfigurationProblems) -> UsersFileLocation {
        func variable(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        var file: ConfigurationFileCheck?
        if let path = config ?? variable("FILESHARE_CONFIG") {
            do {
                file = try ConfigurationFileCheck.read(path)
            } catch {
                throw ConfigurationProblems([error])
            }
            if let problems = file?.problems, !problems.isEmpty { throw ConfigurationProblems(problems) }
        }
        let folder = variable("FILESHARE_FOLDER") ?? file?.values["folder"]
        guard let users = given ?? variable("FILESHARE_USERS") ?? file?.values["users"] else {
            throw ConfigurationProblems([
                ConfigurationProblem(
                    place: "--users",
                    message:
                        "no users file given: give --users FILE, set FILESHARE_USERS, or name it as 'users' in the configuration (--config FILE or FILESHARE_CONFIG)"
                )
            ])
        }
        return UsersFileLocation(users: users, folder: folder)
    }
}
