package io.agentenv.sdk.examples;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import io.agentenv.sdk.SandboxConfig;

/**
 * The {@link CodeInterpreterTool} as LangChain4j tools: give an instance to an AI service
 * ({@code AiServices.builder(Assistant.class).chatModel(model).tools(new LangChain4jSandboxTools(config)).build()})
 * and the model can run code and read files in a sandbox. Close it when the conversation ends.
 */
public final class LangChain4jSandboxTools implements AutoCloseable {
    private final CodeInterpreterTool tool;

    /** Tools over a new sandbox. */
    public LangChain4jSandboxTools(SandboxConfig config) {
        this.tool = new CodeInterpreterTool(config);
    }

    /** Runs Python code in the sandbox. */
    @Tool(CodeInterpreterTool.DESCRIPTION)
    public String runPython(@P("the complete Python 3 program to run") String code) {
        return tool.runPython(code);
    }

    /** Reads a text file of the sandbox. */
    @Tool("Reads a text file from the sandbox, e.g. one the code wrote")
    public String readFile(@P("absolute path, or relative to /home/user") String path) {
        try {
            return tool.sandbox().files().read(path);
        } catch (io.agentenv.sdk.FileNotFoundException e) {
            return "no such file: " + path;
        }
    }

    /** Kills the sandbox. */
    @Override
    public void close() {
        tool.close();
    }
}
