// gravity-wave: the Ambience demo game. Everything but the start lives in GravityWaveCore.
import AmbiencePlatform
import GravityWaveCore

ProcessExit.end(status: GravityWaveApp.main(arguments: Array(CommandLine.arguments.dropFirst())))
