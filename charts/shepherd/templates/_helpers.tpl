{{/*
Labels every object of the chart carries besides its own: the chart and
the tool that manages it. The pods and selectors do not carry them, so
an upgrade to another chart version does not replace the pods' selector.
*/}}
{{- define "shepherd.chartLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* An image reference from repository, tag and digest. */}}
{{- define "shepherd.image" -}}
{{- $ref := .repository -}}
{{- if .tag }}{{ $ref = printf "%s:%s" $ref .tag }}{{ end -}}
{{- if .digest }}{{ $ref = printf "%s@%s" $ref .digest }}{{ end -}}
{{- $ref -}}
{{- end }}

{{/* The webhook Service's DNS name, in the serving certificate. */}}
{{- define "shepherd.webhookDNSName" -}}
{{- if .Values.webhooks.url -}}
{{- (urlParse .Values.webhooks.url).hostname -}}
{{- else -}}
shepherd-webhook.{{ .Release.Namespace }}.svc
{{- end -}}
{{- end }}

{{/* Refusals of value combinations the schema cannot express. */}}
{{- define "shepherd.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) -}}
{{- fail (printf "replicas is %d but leaderElection.enabled is false: replicas would act at once and fight; set leaderElection.enabled=true or replicas=1" (int .Values.replicas)) -}}
{{- end -}}
{{- if and .Values.podDisruptionBudget.enabled (ge (int .Values.podDisruptionBudget.minAvailable) (int .Values.replicas)) (gt (int .Values.replicas) 0) -}}
{{- fail (printf "podDisruptionBudget.minAvailable (%d) must be below replicas (%d), or no node could ever be drained; lower it, raise replicas, or set podDisruptionBudget.enabled=false" (int .Values.podDisruptionBudget.minAvailable) (int .Values.replicas)) -}}
{{- end -}}
{{- end }}
