module github.com/agenthost/agenthost/pdk

go 1.26.8
