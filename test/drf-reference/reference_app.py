"""The Django + DRF reference implementation of the explore listing API (docs/reference/http-api.md).

This module is at the same time the ROOT_URLCONF (urlpatterns, handler404) and
the home of the view, the paginator and the serializer. Settings are made in
serve.py (settings.configure), which also loads the snapshot via
load_snapshot() before serving.

Written the way a Django developer would write the original: a ListAPIView, a
LimitOffsetPagination subclass, JSONRenderer/JSONParser only. The only places
where stock DRF behaviour is overridden are the ones the original narrows,
each marked "NARROWED".
"""
import json
import re

from django.conf import settings
from django.http import HttpResponse
from django.urls import re_path
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.renderers import JSONRenderer

# The 16 served fields, in the order the original emits them.
SERVED_FIELDS = (
    'pk',
    'is_translated',
    'translated_languages',
    'translated_title',
    'backdate',
    'translated_abstract',
    'display_image',
    'series',
    'company_response_summary',
    'company_response_responded',
    'responded_to_article',
    'translated_url',
    'stories',
    'story_item_count',
    'content_type_display',
    'untranslated_content_type',
)

# NARROWED: companies are "all decimal digits", read as ASCII 0-9 only (Python's
# int() would also take ' 7', '+7', '1_0', '7\n', fullwidth and Arabic-Indic
# digits). limit and offset are not narrowed: DRF's own int() applies.
ASCII_DIGITS = re.compile(r'[0-9]+')

# lang segment -> items, pre-sorted by (backdate desc, pk desc)
SNAPSHOT = {}


def load_snapshot(path):
    """Read the v1 snapshot into memory (no validation beyond what sorting needs)."""
    with open(path, encoding='utf-8') as fh:
        data = json.load(fh)
    SNAPSHOT.clear()
    for lang, items in data['languages'].items():
        SNAPSHOT[lang] = sorted(items, key=lambda it: (it['backdate'], it['pk']), reverse=True)
    return data


def stock_parsing():
    """--stock-parsing: undo the NARROWED companies rule, to observe what plain DRF/Django do."""
    return getattr(settings, 'EXPLORE_STOCK_PARSING', False)


class ExploreItemSerializer(serializers.BaseSerializer):
    """Read-only: the 16 served fields of a snapshot item, in the served order."""

    def to_representation(self, instance):
        return {name: instance[name] for name in SERVED_FIELDS}


class ExplorePagination(LimitOffsetPagination):
    default_limit = 10

    @property
    def max_limit(self):
        return settings.EXPLORE_MAX_LIMIT

    # limit and offset: stock DRF (_positive_int, i.e. Python's int()), as the
    # replica reads them (docs/reference/http-api.md#parameters).


class ExploreView(generics.ListAPIView):
    """
    Content items (articles and stories) linked to a company, newest first.
    """
    serializer_class = ExploreItemSerializer
    pagination_class = ExplorePagination

    @property
    def default_response_headers(self):
        # DRF only adds "Vary: Accept" when a view has more than one renderer;
        # the original sends it with JSONRenderer alone, so always add it here.
        # (Effect: every response produced by this view carries it -- 200, 400,
        # the unknown-language 404, 405, 406 and OPTIONS -- exactly as a
        # multi-renderer DRF view would. 301s and the URL-level 404 do not.)
        headers = super().default_response_headers
        headers['Vary'] = 'Accept'
        return headers

    def get_queryset(self):
        items = SNAPSHOT.get(self.kwargs['lang'])
        if items is None:
            raise NotFound()
        return items

    def filter_queryset(self, queryset):
        wanted = set()
        for raw in self.request.query_params.getlist('companies'):
            if stock_parsing():
                # what django-filter / a forms.IntegerField would accept
                from django import forms
                try:
                    value = forms.IntegerField(required=False).clean(raw)
                except forms.ValidationError as exc:
                    raise ValidationError({'companies': exc.messages})
                if value is not None:
                    wanted.add(value)
                continue
            if raw == '':
                continue  # NARROWED: blank values are ignored
            if not ASCII_DIGITS.fullmatch(raw):
                raise ValidationError({'companies': ['Enter a whole number.']})
            wanted.add(int(raw))
        if not wanted:
            return queryset
        return [item for item in queryset if not wanted.isdisjoint(item['companies'])]


def not_found(request, exception=None):
    """handler404: JSON instead of Django's HTML page, rendered like DRF renders it."""
    return HttpResponse(JSONRenderer().render({'detail': 'Not found.'}),
                        content_type='application/json', status=404)


handler404 = not_found

urlpatterns = [
    re_path(r'^(?P<lang>[a-z]{2}(?:-[a-z]{2,4})?)/api/internal/explore/$', ExploreView.as_view()),
]
