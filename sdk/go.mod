module github.com/agenthost/agenthost/sdk

go 1.26.8
