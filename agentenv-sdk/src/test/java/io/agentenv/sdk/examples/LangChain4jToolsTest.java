package io.agentenv.sdk.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.agent.tool.ToolSpecifications;
import java.util.List;
import org.junit.jupiter.api.Test;

/** LangChain4j reads the example's tools as the model will see them (no sandbox needed). */
class LangChain4jToolsTest {
    @Test
    void theToolsAreDescribedWithTheirParameters() {
        List<ToolSpecification> specs = ToolSpecifications.toolSpecificationsFrom(LangChain4jSandboxTools.class);
        assertThat(specs).extracting(ToolSpecification::name).containsExactlyInAnyOrder("runPython", "readFile");
        ToolSpecification run = specs.stream()
                .filter(s -> s.name().equals("runPython"))
                .findFirst()
                .orElseThrow();
        assertThat(run.description()).contains("Python 3");
        assertThat(run.parameters().properties()).containsOnlyKeys("code");
    }
}
