-- Health of an Argo Rollouts AnalysisRun, derived from status.phase.
-- status.message, when set by the controller, is surfaced as is.

local phases = {
  Successful   = {"Healthy", "Analysis completed successfully"},
  Failed       = {"Degraded", "Analysis failed"},
  Error        = {"Degraded", "Analysis encountered an error"},
  Inconclusive = {"Suspended", "Analysis is inconclusive and needs a manual decision"},
  Running      = {"Progressing", "Analysis is running"},
  Pending      = {"Progressing", "Analysis is pending"},
}

local status = obj.status
local phase = nil
local message = nil
if status ~= nil then
  phase = status.phase
  message = status.message
end

if phase == nil or phase == "" then
  return {status = "Progressing", message = "Waiting for analysis to start"}
end

local mapped = phases[phase]
if mapped == nil then
  return {status = "Unknown", message = "Unknown analysis phase: " .. tostring(phase)}
end

if type(message) ~= "string" or message == "" then
  message = mapped[2]
end
return {status = mapped[1], message = message}
