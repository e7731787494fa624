import AmbiencePlatform
import AmbienceTool

ProcessExit.end(status: Tool.run(Array(CommandLine.arguments.dropFirst())))
